import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import { printTable } from '../../output.js';
import { type LastDelivery, lastDeliveryText } from '../webhooks/types.js';

export interface NotifyEmailView {
  id: string;
  name: string;
  notify: string[];
  events: string[];
  created_at: string;
  last_delivery: LastDelivery | null;
}

export const notifyEmailList = command({
  path: ['notify-email', 'list'],
  aliases: [['notify-email']],
  summary: "List the application's e-mail notifications and how their last mail went",
  usage: 'notify-email list [--app <app>] [--format human|json]',
  options: { ...APP_OPTIONS },
  args: { min: 0, max: 0 },
  examples: ['slipway notify-email list', 'slipway notify-email list --format json'],
  printsData: true,
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    const answer = await ctx
      .client()
      .request<{ notifications: NotifyEmailView[]; smtp: boolean }>('GET', `/v1/apps/${app.id}/notify-emails`);
    if (!answer.smtp && ctx.format !== 'json') ctx.err('This platform has no SMTP server (slipway server --smtp-url): no mail is sent.\n');
    printTable(
      ctx,
      answer.notifications.map((n) => ({
        name: n.name,
        notify: n.notify.join(','),
        events: n.events.length ? n.events.join(',') : 'all',
        last_delivery: lastDeliveryText(n.last_delivery),
        id: n.id,
      })),
      ['name', 'notify', 'events', 'last_delivery', 'id'],
      answer,
    );
  },
});
