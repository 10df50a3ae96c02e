import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import { type DeliveryView, printDeliveries } from './types.js';

export const webhooksDeliveries = command({
  path: ['webhooks', 'deliveries'],
  summary: 'The last deliveries to a webhook, newest first, with each attempt and what the receiver answered',
  usage: 'webhooks deliveries <name> [--app <app>] [--format human|json]',
  options: { ...APP_OPTIONS },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<name>', description: 'The webhook’s name' }],
  examples: ['slipway webhooks deliveries ci', 'slipway webhooks deliveries ci --format json'],
  printsData: true,
  async run(ctx, [name], options) {
    const app = await resolveAppOption(ctx, options);
    const answer = await ctx
      .client()
      .request<{ deliveries: DeliveryView[] }>('GET', `/v1/apps/${app.id}/webhooks/${encodeURIComponent(name)}/deliveries`);
    if (ctx.format === 'json') return void ctx.out(`${JSON.stringify(answer, null, 2)}\n`);
    if (answer.deliveries.length === 0)
      return void ctx.err('No delivery yet: nothing this webhook listens to has happened since it was added.\n');
    printDeliveries(ctx.out, answer.deliveries);
  },
});
