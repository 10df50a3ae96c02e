import { route, type QueryParam } from '../route-spec.js';
import { arr, bool, int, named, obj, oneOf, str, time } from '../schema.js';
import { Deployment, LogLine, Status } from '../schemas.js';
import { APP_PARAM } from './apps-routes.js';

const DEPLOYMENT = { ...APP_PARAM, deployment: 'Deployment id (deployment_<uuid>)' };

/** The window and following of a log stream, shared by deployment logs and application output. */
export const LOG_QUERY = {
  lines: {
    schema: int(undefined, { minimum: 0, maximum: 999_999_999 }),
    description: 'Start with the last n stored lines',
    expects: 'a whole number of lines such as 100',
  },
  since: { schema: time(), description: 'Start at this time', expects: 'a time such as 2024-05-01T12:00:00Z' },
  follow: { schema: oneOf(['0', '1']), description: '1: keep the stream open and send new lines as they come' },
} satisfies Record<string, QueryParam>;

/** A deployment as listed: with whether its release is still kept for a rollback. */
const ListedDeployment = named('ListedDeployment', {
  ...Deployment,
  properties: { ...Deployment.properties, release_kept: bool('Its release is still on disk: a rollback to it needs no rebuild') },
  required: [...(Deployment.required ?? []), 'release_kept'],
});

const queued = { description: 'The deployment queued', schema: obj({ deployment: Deployment }) };

export const deploymentRoutes = {
  list: route({
    route: 'GET /v1/apps/:app/deployments',
    operationId: 'listDeployments',
    tag: 'Deployments',
    summary: 'Deployments of the application, newest first',
    params: APP_PARAM,
    query: {
      limit: {
        schema: int(undefined, { minimum: 1 }),
        description: 'How many (default 10, at most 200 are returned)',
        expects: 'a whole number such as 20',
      },
    },
    success: { status: 200, response: { description: 'The deployments', schema: obj({ deployments: arr(ListedDeployment) }) } },
    errors: [404],
  }),
  get: route({
    route: 'GET /v1/apps/:app/deployments/:deployment',
    operationId: 'getDeployment',
    tag: 'Deployments',
    summary: 'One deployment: its state, phase and message',
    params: DEPLOYMENT,
    success: { status: 200, response: { description: 'The deployment', schema: obj({ deployment: Deployment }) } },
    errors: [404],
  }),
  logs: route({
    route: 'GET /v1/apps/:app/deployments/:deployment/logs',
    operationId: 'streamDeploymentLog',
    tag: 'Deployments',
    summary: "A deployment's log as NDJSON, from its start unless told; with follow=1, live until the deployment ends",
    params: DEPLOYMENT,
    query: LOG_QUERY,
    success: {
      status: 200,
      response: { description: 'One JSON object per line; the last is {"end": true, "state", "message"}', schema: LogLine, stream: true },
    },
    errors: [404, 503],
  }),
  create: route({
    route: 'POST /v1/apps/:app/deployments',
    operationId: 'redeploy',
    tag: 'Deployments',
    summary:
      'Deploy again: mode rebuild builds a pushed commit (default: the head of master), mode restart starts the current release again',
    params: APP_PARAM,
    body: obj({ mode: oneOf(['rebuild', 'restart'], 'Default rebuild'), commit: str('A pushed 40-character commit id (rebuild only)') }, [
      'mode',
      'commit',
    ]),
    success: { status: 201, response: queued },
    errors: [404, 409, 503],
  }),
  restart: route({
    route: 'POST /v1/apps/:app/restart',
    operationId: 'restartApp',
    tag: 'Deployments',
    summary: 'Start the current release again with the current variables, health-checked, without a rebuild',
    params: APP_PARAM,
    success: { status: 201, response: queued },
    errors: [404, 409, 503],
  }),
  stop: route({
    route: 'POST /v1/apps/:app/stop',
    operationId: 'stopApp',
    tag: 'Deployments',
    summary: 'Stop the application (the router answers 503 until the next deployment or restart)',
    params: APP_PARAM,
    success: { status: 201, response: { description: 'Whether something was running', schema: obj({ stopped: bool() }) } },
    errors: [404, 503],
  }),
  status: route({
    route: 'GET /v1/apps/:app/status',
    operationId: 'getAppStatus',
    tag: 'Deployments',
    summary: 'Running or stopped, its instances, the release serving and the deployments in progress',
    params: APP_PARAM,
    success: { status: 200, response: { description: 'The status', schema: Status } },
    errors: [404, 503],
  }),
  appLogs: route({
    route: 'GET /v1/apps/:app/logs',
    operationId: 'streamAppLog',
    tag: 'Deployments',
    summary: "The application's output as NDJSON, read from its end; with follow=1, live",
    params: APP_PARAM,
    query: LOG_QUERY,
    success: {
      status: 200,
      response: { description: 'One JSON object per line; the last is {"end": true}', schema: LogLine, stream: true },
    },
    errors: [404, 503],
  }),
};
