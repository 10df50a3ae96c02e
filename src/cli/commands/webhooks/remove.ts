import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';

export const webhooksRemove = command({
  path: ['webhooks', 'remove'],
  aliases: [['webhooks', 'rm']],
  summary: 'Stop sending events to a webhook; its deliveries are forgotten',
  usage: 'webhooks remove <name|id> [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<name|id>', description: 'The webhook’s name or id (`slipway webhooks` lists them)' }],
  examples: ['slipway webhooks remove ci'],
  async run(ctx, [name], options) {
    const app = await resolveAppOption(ctx, options);
    await ctx.client().request('DELETE', `/v1/apps/${app.id}/webhooks/${encodeURIComponent(name)}`);
    ctx.err(`Webhook ${name} of ${app.name} removed.\n`);
  },
});
