import { orgOfApp, quotasOf } from '../quotas.js';
import type { HttpRouter } from '../http-router.js';
import type { ApiContext, ApiRequest } from '../context.js';
import type { WebhookRow } from '../../store/webhooks.js';
import type { NotifyEmailRow } from '../../store/notify-emails.js';
import type { DeliveryRow } from '../../store/notification-deliveries.js';
import type { AppRow } from '../../store/apps.js';
import { appForUser } from '../access.js';
import { checkHandle } from '../../core/names.js';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import { checkEventNames } from '../../notifications/event-names.js';
import { checkWebhookUrl, shownUrl } from '../../notifications/notification-urls.js';
import { newWebhookSecret } from '../../notifications/signing.js';
import { notificationRoutes } from './notifications-routes.js';
import { receiverUrlFor } from '../receiver-urls.js';

const SHOWN_DELIVERIES = 20;
/** An address people type: something@somewhere, no spaces nor list separators. */
const ADDRESS = /^[^\s@,;<>"]+@[^\s@,;<>"]+\.[^\s@,;<>"]+$/;

function lastDelivery(row: DeliveryRow | undefined) {
  return row ? { state: row.state, event: row.event_type, created_at: row.created_at } : null;
}

function webhookView(ctx: ApiRequest, row: WebhookRow) {
  return {
    id: row.id,
    name: row.name,
    url: receiverUrlFor(ctx.token.scope, shownUrl(row.url)),
    format: row.format,
    events: JSON.parse(row.events) as string[],
    created_at: row.created_at,
    last_delivery: lastDelivery(ctx.deps.store.notificationDeliveries.ofWebhook(row.id, 1)[0]),
  };
}

function emailView(ctx: ApiRequest, row: NotifyEmailRow) {
  return {
    id: row.id,
    name: row.name,
    notify: JSON.parse(row.targets) as string[],
    events: JSON.parse(row.events) as string[],
    created_at: row.created_at,
    last_delivery: lastDelivery(ctx.deps.store.notificationDeliveries.ofEmail(row.id, 1)[0]),
  };
}

function deliveryView(ctx: ApiRequest, row: DeliveryRow) {
  return {
    id: row.id,
    event: row.event_type,
    summary: (JSON.parse(row.event) as { summary: string }).summary,
    created_at: row.created_at,
    state: row.state,
    next_attempt_at: row.next_attempt_at,
    attempts: ctx.deps.store.notificationDeliveries.attemptsOf(row.id).map((a) => ({
      attempt: a.attempt,
      at: a.at,
      ok: a.ok === 1,
      status_code: a.status_code,
      error: a.error,
      duration_ms: a.duration_ms,
    })),
  };
}

function guard(ctx: ApiRequest) {
  const notifications = ctx.deps.notifications;
  if (!notifications) throw new ValidationError('Notifications are not available on this server.');
  return notifications;
}

function webhookNamed(ctx: ApiRequest, app: AppRow, name: string): WebhookRow {
  const row = ctx.deps.store.webhooks.find(app.id, name);
  if (!row) throw new NotFoundError(`This application has no webhook named ${name}.`, 'List its webhooks with `slipway webhooks`.');
  return row;
}

function emailNamed(ctx: ApiRequest, app: AppRow, ref: string): NotifyEmailRow {
  const row = ctx.deps.store.notifyEmails.find(app.id, ref);
  if (!row) {
    throw new NotFoundError(
      `This application has no e-mail notification ${JSON.stringify(ref)}.`,
      'List them with `slipway notify-email list`.',
    );
  }
  return row;
}

/**
 * `--notify` values: an address, `user`, `ORGANISATION`, or a member's id or name (the
 * reference takes user ids). Members are checked now so a typo is not a silent mail to nobody.
 */
function checkTargets(ctx: ApiRequest, app: AppRow, values: readonly string[]): string[] {
  const targets = values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
  if (targets.length === 0) {
    throw new ValidationError('Nobody to notify.', 'Give --notify <address|user|ORGANISATION> (repeat it, or separate with commas).');
  }
  const members = ctx.deps.store.orgs.members(app.org_id);
  return [
    ...new Set(
      targets.map((target) => {
        if (target === 'user' || target === 'ORGANISATION' || ADDRESS.test(target)) return target;
        const member = members.find((m) => m.user_id === target || m.name === target);
        if (member) return member.user_id;
        throw new ValidationError(
          `${JSON.stringify(target)} is neither an e-mail address, user, ORGANISATION nor a member of the application's organisation.`,
          'Give an address (ops@example.com), `user` (whoever caused the event) or `ORGANISATION` (every member).',
        );
      }),
    ),
  ];
}

/** An application's webhooks and e-mail notifications, their deliveries, and users' addresses. */
export function notificationHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(notificationRoutes.listWebhooks, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    return { webhooks: ctx.deps.store.webhooks.ofApp(app.id).map((row) => webhookView(ctx, row)) };
  });

  router.handle(notificationRoutes.addWebhook, async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    quotasOf(ctx.deps).checkNewWebhook(orgOfApp(ctx.deps, app));
    const body = ctx.body;
    const name = checkHandle('webhook name', body.name);
    const url = await checkWebhookUrl(body.url, guard(ctx).guard);
    const format = body.format ?? 'raw';
    const secret = newWebhookSecret();
    const row = ctx.deps.store.webhooks.add({ appId: app.id, name, url, format, events: checkEventNames(body.events), secret });
    return { webhook: webhookView(ctx, row), secret };
  });

  router.handle(notificationRoutes.removeWebhook, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    ctx.deps.store.webhooks.remove(app.id, webhookNamed(ctx, app, ctx.params.name).name);
    return { webhooks: ctx.deps.store.webhooks.ofApp(app.id).map((row) => webhookView(ctx, row)) };
  });

  router.handle(notificationRoutes.webhookDeliveries, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const hook = webhookNamed(ctx, app, ctx.params.name);
    return { deliveries: ctx.deps.store.notificationDeliveries.ofWebhook(hook.id, SHOWN_DELIVERIES).map((d) => deliveryView(ctx, d)) };
  });

  const emailListing = (ctx: ApiRequest, app: AppRow) => ({
    notifications: ctx.deps.store.notifyEmails.ofApp(app.id).map((row) => emailView(ctx, row)),
    smtp: ctx.deps.notifications?.smtp ?? false,
  });

  router.handle(notificationRoutes.listEmails, (ctx) => emailListing(ctx, appForUser(ctx.deps.store, ctx.user, ctx.params.app)));

  router.handle(notificationRoutes.addEmail, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    quotasOf(ctx.deps).checkNewNotifyEmail(orgOfApp(ctx.deps, app));
    if (!guard(ctx).smtp) {
      throw new ValidationError(
        'This platform has no SMTP server to send mail through.',
        'The operator starts the daemon with `slipway server --smtp-url smtp://user:pass@host:port --smtp-from <address>`.',
      );
    }
    const body = ctx.body;
    const targets = checkTargets(ctx, app, body.notify);
    const events = checkEventNames(body.events);
    const existing = ctx.deps.store.notifyEmails.ofApp(app.id).length;
    const name = body.name === undefined ? `email-${existing + 1}` : checkHandle('notification name', body.name);
    const row = ctx.deps.store.notifyEmails.add({ appId: app.id, name, targets, events });
    return { notification: emailView(ctx, row) };
  });

  router.handle(notificationRoutes.removeEmail, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    ctx.deps.store.notifyEmails.remove(app.id, emailNamed(ctx, app, ctx.params.ref).id);
    return emailListing(ctx, app);
  });

  router.handle(notificationRoutes.emailDeliveries, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const row = emailNamed(ctx, app, ctx.params.ref);
    return { deliveries: ctx.deps.store.notificationDeliveries.ofEmail(row.id, SHOWN_DELIVERIES).map((d) => deliveryView(ctx, d)) };
  });

  router.handle(notificationRoutes.myAddress, (ctx) => ({
    address: ctx.deps.store.notifyEmails.addressOf(ctx.user.id) ?? null,
  }));

  router.handle(notificationRoutes.setMyAddress, (ctx) => {
    const address = ctx.body.address;
    if (!ADDRESS.test(address)) {
      throw new ValidationError(`${JSON.stringify(address)} is not an e-mail address.`, 'Give one such as you@example.com.');
    }
    ctx.deps.store.notifyEmails.setAddress(ctx.user.id, address);
    return { address };
  });
}
