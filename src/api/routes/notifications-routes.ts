import { route } from '../route-spec.js';
import { arr, int, named, nullable, obj, oneOf, str, time } from '../schema.js';
import { APP_PARAM } from './apps-routes.js';
import { PLATFORM_EVENT_TYPES } from '../../core/platform-events.js';

const Attempt = obj({
  attempt: int('1 for the first'),
  at: time(),
  ok: { type: 'boolean' },
  status_code: nullable(int('The receiver’s HTTP status')),
  error: nullable(str('What went wrong')),
  duration_ms: int(),
});

export const Delivery = named(
  'NotificationDelivery',
  obj({
    id: str(),
    event: str('The event name'),
    summary: str('The event in one sentence'),
    created_at: time(),
    state: oneOf(['pending', 'delivered', 'failed'], 'pending: waiting for its next attempt'),
    next_attempt_at: nullable(time()),
    attempts: arr(Attempt),
  }),
);

const lastDelivery = nullable(obj({ state: oneOf(['pending', 'delivered', 'failed']), event: str(), created_at: time() }));

export const Webhook = named(
  'Webhook',
  obj({
    id: str(),
    name: str(),
    url: str('The receiver; a password in it is shown as ***'),
    format: oneOf(['raw', 'slack']),
    events: arr(str(), 'The events sent; empty: every event'),
    created_at: time(),
    last_delivery: lastDelivery,
  }),
);

export const NotifyEmail = named(
  'NotifyEmail',
  obj({
    id: str(),
    name: str(),
    notify: arr(str(), 'Addresses, `user` (who caused the event), `ORGANISATION` (every member), user ids or names'),
    events: arr(str(), 'The events mailed; empty: every event'),
    created_at: time(),
    last_delivery: lastDelivery,
  }),
);

const WEBHOOK_PARAM = { ...APP_PARAM, name: 'The webhook’s name or id' };
const EMAIL_PARAM = { ...APP_PARAM, ref: 'The e-mail notification’s name or id' };
const events = arr(
  oneOf([...PLATFORM_EVENT_TYPES, 'DEPLOYMENT_ACTION_BEGIN', 'DEPLOYMENT_SUCCESS', 'DEPLOYMENT_FAIL', 'DEPLOYMENT_CANCELLED']),
);
const webhookList = { description: "The application's webhooks", schema: obj({ webhooks: arr(Webhook) }) };
const emailList = {
  description: "The application's e-mail notifications",
  schema: obj({ notifications: arr(NotifyEmail), smtp: { type: 'boolean', description: 'Whether the platform has an SMTP server' } }),
};
const deliveries = { description: 'The last deliveries, newest first, with each attempt', schema: obj({ deliveries: arr(Delivery) }) };

export const notificationRoutes = {
  listWebhooks: route({
    route: 'GET /v1/apps/:app/webhooks',
    operationId: 'listWebhooks',
    tag: 'Notifications',
    summary: "The application's webhooks",
    params: APP_PARAM,
    success: { status: 200, response: webhookList },
    errors: [404],
  }),
  addWebhook: route({
    route: 'POST /v1/apps/:app/webhooks',
    operationId: 'addWebhook',
    tag: 'Notifications',
    summary: 'Send the application’s events to a URL as signed JSON; the signing secret is answered this once',
    params: APP_PARAM,
    body: obj({ name: str(), url: str('http(s) URL of the receiver'), format: oneOf(['raw', 'slack']), events }, ['format', 'events']),
    success: {
      status: 201,
      response: {
        description: 'The webhook and its secret (never shown again)',
        schema: obj({ webhook: Webhook, secret: str('HMAC-SHA256 key of X-Slipway-Signature') }),
      },
    },
    errors: [403, 404, 409],
  }),
  removeWebhook: route({
    route: 'DELETE /v1/apps/:app/webhooks/:name',
    operationId: 'removeWebhook',
    tag: 'Notifications',
    summary: 'Stop sending events to a webhook (its deliveries go with it)',
    params: WEBHOOK_PARAM,
    success: { status: 200, response: webhookList },
    errors: [404],
  }),
  webhookDeliveries: route({
    route: 'GET /v1/apps/:app/webhooks/:name/deliveries',
    operationId: 'listWebhookDeliveries',
    tag: 'Notifications',
    summary: 'The last deliveries to a webhook and each attempt’s outcome',
    params: WEBHOOK_PARAM,
    success: { status: 200, response: deliveries },
    errors: [404],
  }),
  listEmails: route({
    route: 'GET /v1/apps/:app/notify-emails',
    operationId: 'listNotifyEmails',
    tag: 'Notifications',
    summary: "The application's e-mail notifications",
    params: APP_PARAM,
    success: { status: 200, response: emailList },
    errors: [404],
  }),
  addEmail: route({
    route: 'POST /v1/apps/:app/notify-emails',
    operationId: 'addNotifyEmail',
    tag: 'Notifications',
    summary: 'Mail the application’s events through the platform’s SMTP server',
    params: APP_PARAM,
    body: obj({ name: str(), notify: arr(str()), events }, ['name', 'events']),
    success: { status: 201, response: { description: 'The notification', schema: obj({ notification: NotifyEmail }) } },
    errors: [403, 404, 409],
  }),
  removeEmail: route({
    route: 'DELETE /v1/apps/:app/notify-emails/:ref',
    operationId: 'removeNotifyEmail',
    tag: 'Notifications',
    summary: 'Stop mailing events (its deliveries go with it)',
    params: EMAIL_PARAM,
    success: { status: 200, response: emailList },
    errors: [404],
  }),
  emailDeliveries: route({
    route: 'GET /v1/apps/:app/notify-emails/:ref/deliveries',
    operationId: 'listNotifyEmailDeliveries',
    tag: 'Notifications',
    summary: 'The last mails sent for an e-mail notification and each attempt’s outcome',
    params: EMAIL_PARAM,
    success: { status: 200, response: deliveries },
    errors: [404],
  }),
  myAddress: route({
    route: 'GET /v1/me/email',
    operationId: 'getMyEmailAddress',
    tag: 'Notifications',
    summary: 'The address you are mailed at by notifications to `user` and `ORGANISATION`',
    success: { status: 200, response: { description: 'Your address', schema: obj({ address: nullable(str()) }) } },
    errors: [],
  }),
  setMyAddress: route({
    route: 'PUT /v1/me/email',
    operationId: 'setMyEmailAddress',
    tag: 'Notifications',
    summary: 'Set the address you are mailed at by notifications to `user` and `ORGANISATION`',
    body: obj({ address: str() }),
    success: { status: 200, response: { description: 'Your address', schema: obj({ address: nullable(str()) }) } },
    errors: [],
  }),
};
