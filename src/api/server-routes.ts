import { route } from './route-spec.js';
import { bool, mapOf, obj, str } from './schema.js';
import { APP_PARAM } from './routes/apps-routes.js';

/** Routes the server answers before the router: no token needed, or an upgraded connection. */
export const serverRoutes = {
  health: route({
    route: 'GET /v1/health',
    operationId: 'getHealth',
    tag: 'Daemon',
    summary: 'Liveness of the daemon',
    success: { status: 200, response: { description: 'It answers', schema: obj({ ok: bool() }) } },
    errors: [],
  }),
  openapi: route({
    route: 'GET /v1/openapi.json',
    operationId: 'getOpenApi',
    tag: 'Daemon',
    summary: 'This document',
    success: { status: 200, response: { description: 'The OpenAPI document', schema: mapOf({}) } },
    errors: [],
  }),
  metrics: route({
    route: 'GET /metrics',
    operationId: 'getMetrics',
    tag: 'Daemon',
    summary: "The daemon's Prometheus metrics (text exposition format), for administrators",
    description:
      'Requests by app and status, request durations, open router connections, deployments by state and duration, build durations, instance restarts and liveness replacements. ' +
      '`slipway server --metrics-listen <addr:port>` serves the same without a token on an address of your choice.',
    success: { status: 200, response: { description: 'Prometheus text exposition format 0.0.4', schema: str(), text: 'text/plain' } },
    errors: [403, 503],
  }),
  run: route({
    route: 'POST /v1/apps/:app/run',
    operationId: 'runOneOff',
    tag: 'Deployments',
    summary: "Run a one-off command in a fresh sandbox of the app's current release, over an upgraded connection",
    description:
      'Send `Connection: Upgrade` and `Upgrade: slipway-run`. After the 101 answer, the request side carries standard input as raw bytes; ' +
      'the answer side carries frames of standard output, standard error and finally the exit status (src/shared/run-frames.ts).',
    params: APP_PARAM,
    query: { command: { schema: str(), description: 'The argv to run, as a JSON array of strings' } },
    success: { status: 101, response: { description: 'Switching to the slipway-run protocol', schema: {} } },
    errors: [404, 503],
  }),
};
