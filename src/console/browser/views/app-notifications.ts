import { enc } from '../api.js';
import { formatTime, h, replaceChildren } from '../dom.js';
import { every, type ViewContext } from '../view.js';

/** What the notification routes answer (src/api/routes/notifications-routes.ts). */
interface LastDelivery {
  state: 'pending' | 'delivered' | 'failed';
  event: string;
  created_at: string;
}
interface Webhook {
  name: string;
  url: string;
  format: string;
  events: string[];
  last_delivery: LastDelivery | null;
}
interface NotifyEmail {
  id: string;
  name: string;
  notify: string[];
  events: string[];
  last_delivery: LastDelivery | null;
}
interface Delivery {
  id: string;
  event: string;
  summary: string;
  created_at: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: Array<{ attempt: number; ok: boolean; status_code: number | null; error: string | null }>;
}

const STATE_CLASS = { delivered: 'state-ok', failed: 'state-failed', pending: 'state-wip' } as const;
const SHOWN = 10;

function stateBadge(state: LastDelivery['state']): HTMLElement {
  return h('span', { class: `badge ${STATE_CLASS[state]}` }, state);
}

/** Two cells: the last delivery's event and time, then its state (the page's tables keep their last column narrow). */
function lastCells(last: LastDelivery | null): HTMLElement[] {
  return last
    ? [h('td', {}, `${last.event}, ${formatTime(last.created_at)}`), h('td', {}, stateBadge(last.state))]
    : [h('td', { class: 'meta' }, 'none yet'), h('td', {})];
}

/**
 * The app page's notifications (docs/behaviour.md, Notifications): its webhooks and e-mail
 * notifications with how each last delivery went, and the last deliveries with their attempts,
 * so a receiver that fails is seen here. Adding and removing stay in the CLI, where the
 * webhook's secret can be shown once.
 */
export function notificationsCard(ctx: ViewContext, app: { id: string }): HTMLElement {
  const base = `/v1/apps/${enc(app.id)}`;
  const content = h('div', {});
  const card = h(
    'section',
    { class: 'card', id: 'notifications', 'aria-labelledby': 'notifications-title' },
    h('h2', { id: 'notifications-title' }, 'Notifications'),
    content,
  );
  const draw = async () => {
    const [{ webhooks }, emails] = await Promise.all([
      ctx.api.get<{ webhooks: Webhook[] }>(`${base}/webhooks`),
      ctx.api.get<{ notifications: NotifyEmail[]; smtp: boolean }>(`${base}/notify-emails`),
    ]);
    const deliveries = (
      await Promise.all([
        ...webhooks.map((w) =>
          ctx.api
            .get<{ deliveries: Delivery[] }>(`${base}/webhooks/${enc(w.name)}/deliveries`)
            .then((d) => d.deliveries.map((x) => ({ ...x, to: `webhook ${w.name}` }))),
        ),
        ...emails.notifications.map((n) =>
          ctx.api
            .get<{ deliveries: Delivery[] }>(`${base}/notify-emails/${enc(n.id)}/deliveries`)
            .then((d) => d.deliveries.map((x) => ({ ...x, to: `e-mail ${n.name}` }))),
        ),
      ])
    )
      .flat()
      .sort((a, b) => b.created_at.localeCompare(a.created_at))
      .slice(0, SHOWN);
    if (ctx.signal.aborted) return;
    const events = (list: string[]) => (list.length ? list.join(', ') : 'every event');
    replaceChildren(
      content,
      webhooks.length || emails.notifications.length
        ? h(
            'table',
            { 'aria-label': 'Webhooks and e-mail notifications' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                h('th', {}, 'Name'),
                h('th', {}, 'Sends to'),
                h('th', {}, 'Events'),
                h('th', {}, 'Last delivery'),
                h('th', {}, 'State'),
              ),
            ),
            h(
              'tbody',
              {},
              ...webhooks.map((w) =>
                h(
                  'tr',
                  { 'data-webhook': w.name },
                  h('td', {}, w.name),
                  h('td', {}, h('code', {}, w.url), w.format === 'slack' ? ' (Slack)' : ''),
                  h('td', {}, events(w.events)),
                  ...lastCells(w.last_delivery),
                ),
              ),
              ...emails.notifications.map((n) =>
                h(
                  'tr',
                  { 'data-notify-email': n.name },
                  h('td', {}, n.name),
                  h('td', {}, `e-mail: ${n.notify.join(', ')}`),
                  h('td', {}, events(n.events)),
                  ...lastCells(n.last_delivery),
                ),
              ),
            ),
          )
        : h('p', { class: 'meta' }, 'No webhook nor e-mail notification.'),
      emails.notifications.length && !emails.smtp
        ? h('p', { class: 'field-error' }, 'This platform has no SMTP server: no mail is sent.')
        : null,
      deliveries.length ? h('h3', {}, 'Last deliveries') : null,
      deliveries.length
        ? h(
            'ul',
            { class: 'deliveries', 'aria-label': 'Last deliveries' },
            ...deliveries.map((d) =>
              h(
                'li',
                { 'data-delivery': d.id },
                stateBadge(d.state),
                ` ${formatTime(d.created_at)} · ${d.event} → ${d.to}: `,
                d.attempts
                  .map(
                    (a) =>
                      `attempt ${a.attempt} ${a.ok ? `ok${a.status_code ? ` ${a.status_code}` : ''}` : `failed (${a.error ?? a.status_code})`}`,
                  )
                  .join('; ') || 'not attempted yet',
              ),
            ),
          )
        : null,
      h(
        'p',
        { class: 'help' },
        'Add one with ',
        h('code', {}, 'slipway webhooks add <name> <url>'),
        ' or ',
        h('code', {}, 'slipway notify-email add --notify <address|user|ORGANISATION>'),
        '.',
      ),
    );
  };
  void draw().catch(() => undefined);
  every(10_000, ctx.signal, draw);
  return card;
}
