import { route } from '../route-spec.js';
import { arr, bool, int, named, nullable, obj, oneOf, str, time } from '../schema.js';
import { APP_PARAM } from './apps-routes.js';

const DRAIN_TYPE_NAMES = ['TCPSyslog', 'UDPSyslog', 'HTTP', 'ElasticSearch'];

export const Drain = named(
  'Drain',
  obj({
    id: str('drain_<uuid>'),
    type: oneOf(DRAIN_TYPE_NAMES),
    url: str('Where lines are sent (Elasticsearch: `/_bulk` is appended)'),
    username: nullable(str('For HTTP basic authentication; the password is never shown')),
    with_access_logs: bool('Whether the router’s access records are sent too'),
    enabled: bool(),
    created_at: time(),
    state: oneOf(
      ['ok', 'waiting', 'failing', 'disabled', 'unknown'],
      'ok: nothing waits; waiting: lines on their way; failing: the receiver refuses or cannot be reached (retried)',
    ),
    waiting: int('Lines waiting in the drain’s disk buffer'),
    lag_seconds: int('Age of the oldest line waiting, in seconds', { type: 'number' }),
    dropped: int('Lines dropped, oldest first, because the buffer was full'),
    delivered: int('Lines delivered since the daemon started'),
    last_error: nullable(str('Why the last attempt failed')),
    last_delivery_at: nullable(time()),
  }),
);

const DRAIN_PARAM = { ...APP_PARAM, drain: 'Drain id (drain_<uuid>)' };
const one = { description: 'The drain', schema: obj({ drain: Drain }) };

export const drainRoutes = {
  list: route({
    route: 'GET /v1/apps/:app/drains',
    operationId: 'listDrains',
    tag: 'Drains',
    summary: "The application's log drains with their state, lag and lines dropped",
    params: APP_PARAM,
    success: { status: 200, response: { description: 'Its drains', schema: obj({ drains: arr(Drain) }) } },
    errors: [404],
  }),
  create: route({
    route: 'POST /v1/apps/:app/drains',
    operationId: 'createDrain',
    tag: 'Drains',
    summary: "Forward the application's log (and its access log when asked) to a syslog, HTTP or Elasticsearch receiver",
    params: APP_PARAM,
    body: obj(
      {
        type: oneOf(DRAIN_TYPE_NAMES),
        url: str('http(s):// for HTTP and ElasticSearch, tcp:// for TCPSyslog, udp:// for UDPSyslog'),
        username: str(),
        password: str(),
        with_access_logs: bool(),
      },
      ['username', 'password', 'with_access_logs'],
    ),
    success: { status: 201, response: one },
    errors: [400, 403, 404],
  }),
  remove: route({
    route: 'DELETE /v1/apps/:app/drains/:drain',
    operationId: 'removeDrain',
    tag: 'Drains',
    summary: 'Remove a drain; the lines still waiting for it are discarded',
    params: DRAIN_PARAM,
    success: { status: 200, response: one },
    errors: [404],
  }),
  enable: route({
    route: 'PUT /v1/apps/:app/drains/:drain/enabled',
    operationId: 'enableDrain',
    tag: 'Drains',
    summary: 'Send the drain’s lines again, those that waited first',
    params: DRAIN_PARAM,
    success: { status: 200, response: one },
    errors: [404],
  }),
  disable: route({
    route: 'DELETE /v1/apps/:app/drains/:drain/enabled',
    operationId: 'disableDrain',
    tag: 'Drains',
    summary: 'Stop sending; lines go on waiting in the buffer (the oldest are dropped when it is full)',
    params: DRAIN_PARAM,
    success: { status: 200, response: one },
    errors: [404],
  }),
};
