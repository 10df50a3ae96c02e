import { route } from '../route-spec.js';
import { arr, obj, str } from '../schema.js';
import { EnvList, EnvVar, Redeploy } from '../schemas.js';
import { APP_PARAM } from './apps-routes.js';

const VARIABLE = { ...APP_PARAM, name: 'Variable name' };
const changed = {
  description: 'What it exposes now, and the linked applications restarted to see it',
  schema: obj({ published_config: EnvList, redeployed: arr(Redeploy) }),
};

export const publishedConfigRoutes = {
  list: route({
    route: 'GET /v1/apps/:app/published-config',
    operationId: 'listPublishedConfig',
    tag: 'Services',
    summary: 'Configuration the application exposes to the applications linked to it',
    params: APP_PARAM,
    success: { status: 200, response: { description: 'The exposed variables', schema: obj({ published_config: EnvList }) } },
    errors: [404],
  }),
  replace: route({
    route: 'PUT /v1/apps/:app/published-config',
    operationId: 'replacePublishedConfig',
    tag: 'Services',
    summary: 'Replace everything the application exposes; restarts the linked applications that run',
    params: APP_PARAM,
    body: obj({ published_config: arr(EnvVar, 'The whole new set') }),
    success: { status: 200, response: changed },
    errors: [404],
  }),
  set: route({
    route: 'PUT /v1/apps/:app/published-config/:name',
    operationId: 'setPublishedConfigVar',
    tag: 'Services',
    summary: 'Expose a variable; restarts the linked applications that run',
    params: VARIABLE,
    body: obj({ value: str() }),
    success: { status: 200, response: changed },
    errors: [404],
  }),
  remove: route({
    route: 'DELETE /v1/apps/:app/published-config/:name',
    operationId: 'removePublishedConfigVar',
    tag: 'Services',
    summary: 'Stop exposing a variable; restarts the linked applications that run',
    params: VARIABLE,
    success: { status: 200, response: changed },
    errors: [404],
  }),
};
