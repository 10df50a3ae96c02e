import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import { printTable } from '../../output.js';
import { lastDeliveryText, type WebhookView } from './types.js';

export const webhooksList = command({
  path: ['webhooks'],
  aliases: [['webhooks', 'list']],
  summary: "List the application's webhooks and how their last delivery went",
  usage: 'webhooks [--app <app>] [--format human|json]',
  options: { ...APP_OPTIONS },
  args: { min: 0, max: 0 },
  examples: ['slipway webhooks', 'slipway webhooks --format json'],
  printsData: true,
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    const { webhooks } = await ctx.client().request<{ webhooks: WebhookView[] }>('GET', `/v1/apps/${app.id}/webhooks`);
    printTable(
      ctx,
      webhooks.map((w) => ({
        name: w.name,
        url: w.url,
        format: w.format,
        events: w.events.length ? w.events.join(',') : 'all',
        last_delivery: lastDeliveryText(w.last_delivery),
        id: w.id,
      })),
      ['name', 'url', 'format', 'events', 'last_delivery', 'id'],
      { webhooks },
    );
  },
});
