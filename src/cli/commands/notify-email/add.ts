import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import { EVENT_HELP } from '../webhooks/types.js';
import type { NotifyEmailView } from './list.js';

export const notifyEmailAdd = command({
  path: ['notify-email', 'add'],
  summary: "Mail the application's events to addresses, the user who caused them, or the whole organisation",
  usage: 'notify-email add [<name>] --notify <address|user|ORGANISATION>... [--event <event>]... [--app <app>]',
  options: {
    ...APP_OPTIONS,
    notify: {
      type: 'string',
      multiple: true,
      value: '<address|user|ORGANISATION>',
      description:
        'Who is mailed (repeat, or separate with commas): an address, `user` (whoever caused the event), `ORGANISATION` (every member of the app’s organisation), or a member’s id or name',
    },
    event: {
      type: 'string',
      multiple: true,
      value: '<event>',
      description: `An event to mail (repeat; default every event): ${EVENT_HELP}`,
    },
  },
  args: { min: 0, max: 1 },
  arguments: [{ name: '[<name>]', description: 'A name for it (default email-<n>)' }],
  examples: [
    'slipway notify-email add --notify ops@example.com --event deployment.failed',
    'slipway notify-email add team --notify ORGANISATION --notify user --event DEPLOYMENT_FAIL',
  ],
  async run(ctx, [name], options) {
    const app = await resolveAppOption(ctx, options);
    const events = options.event;
    const { notification } = await ctx.client().request<{ notification: NotifyEmailView }>('POST', `/v1/apps/${app.id}/notify-emails`, {
      ...(name ? { name } : {}),
      notify: options.notify ?? [],
      ...(events ? { events } : {}),
    });
    ctx.err(
      `E-mail notification ${notification.name} of ${app.name}: ${notification.events.length ? notification.events.join(', ') : 'every event'} to ${notification.notify.join(', ')}.\n`,
    );
    if (notification.notify.some((t) => !t.includes('@'))) {
      ctx.err('Users are mailed at the address they set with `slipway notify-email address <address>`.\n');
    }
  },
});
