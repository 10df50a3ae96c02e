import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import { type DeliveryView, printDeliveries } from '../webhooks/types.js';

export const notifyEmailDeliveries = command({
  path: ['notify-email', 'deliveries'],
  summary: 'The last mails of an e-mail notification, newest first, with each attempt',
  usage: 'notify-email deliveries <name|id> [--app <app>] [--format human|json]',
  options: { ...APP_OPTIONS },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<name|id>', description: 'The notification’s name or id' }],
  examples: ['slipway notify-email deliveries team'],
  printsData: true,
  async run(ctx, [ref], options) {
    const app = await resolveAppOption(ctx, options);
    const answer = await ctx
      .client()
      .request<{ deliveries: DeliveryView[] }>('GET', `/v1/apps/${app.id}/notify-emails/${encodeURIComponent(ref)}/deliveries`);
    if (ctx.format === 'json') return void ctx.out(`${JSON.stringify(answer, null, 2)}\n`);
    if (answer.deliveries.length === 0) return void ctx.err('No mail yet.\n');
    printDeliveries(ctx.out, answer.deliveries);
  },
});
