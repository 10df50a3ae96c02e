import { route } from '../route-spec.js';
import { arr, int, obj } from '../schema.js';
import { AccessLogLine, TrafficMinute } from '../schemas.js';
import { APP_PARAM } from './apps-routes.js';
import { LOG_QUERY } from './deployments-routes.js';

export const trafficRoutes = {
  accessLogs: route({
    route: 'GET /v1/apps/:app/accesslogs',
    operationId: 'streamAccessLog',
    tag: 'Deployments',
    summary:
      "The application's access log as NDJSON (one line per request the router forwarded to it), read from its end; with follow=1, live",
    params: APP_PARAM,
    query: LOG_QUERY,
    success: {
      status: 200,
      response: { description: 'One JSON object per request; the last is {"end": true}', schema: AccessLogLine, stream: true },
    },
    errors: [404, 503],
  }),
  traffic: route({
    route: 'GET /v1/apps/:app/traffic',
    operationId: 'getAppTraffic',
    tag: 'Deployments',
    summary: "The last hour of the application's requests, minute by minute: count, 5xx answers and 95th percentile duration",
    params: APP_PARAM,
    success: {
      status: 200,
      response: {
        description: 'Sixty minutes, oldest first, the current one last',
        schema: obj({ window_minutes: int(), minutes: arr(TrafficMinute) }),
      },
    },
    errors: [404, 503],
  }),
};
