import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';

export const notifyEmailRemove = command({
  path: ['notify-email', 'remove'],
  aliases: [['notify-email', 'rm']],
  summary: 'Stop mailing events for an e-mail notification',
  usage: 'notify-email remove <name|id> [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<name|id>', description: 'The notification’s name or id (`slipway notify-email list`)' }],
  examples: ['slipway notify-email remove team'],
  async run(ctx, [ref], options) {
    const app = await resolveAppOption(ctx, options);
    await ctx.client().request('DELETE', `/v1/apps/${app.id}/notify-emails/${encodeURIComponent(ref)}`);
    ctx.err(`E-mail notification ${ref} of ${app.name} removed.\n`);
  },
});
