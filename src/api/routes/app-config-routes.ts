import { route } from '../route-spec.js';
import { arr, obj, str } from '../schema.js';
import { Deployment, Setting } from '../schemas.js';
import { APP_PARAM } from './apps-routes.js';

export const appConfigRoutes = {
  list: route({
    route: 'GET /v1/apps/:app/config',
    operationId: 'listAppSettings',
    tag: 'Applications',
    summary: "The application's platform settings (cancel-on-push...)",
    params: APP_PARAM,
    success: { status: 200, response: { description: 'The settings', schema: obj({ config: arr(Setting) }) } },
    errors: [404],
  }),
  set: route({
    route: 'PUT /v1/apps/:app/config/:name',
    operationId: 'setAppSetting',
    tag: 'Applications',
    summary: 'Change one platform setting',
    params: { ...APP_PARAM, name: 'The setting, e.g. cancel-on-push' },
    body: obj({ value: { type: ['boolean', 'string'], description: 'true or false' } }),
    success: { status: 200, response: { description: 'The new value', schema: obj({ name: str(), value: { type: 'boolean' } }) } },
    errors: [404],
  }),
  cancel: route({
    route: 'POST /v1/apps/:app/deployments/cancel',
    operationId: 'cancelDeployments',
    tag: 'Deployments',
    summary: 'Cancel the running and queued deployments of the application (the previous release keeps serving)',
    params: APP_PARAM,
    success: { status: 201, response: { description: 'The deployments cancelled', schema: obj({ cancelled: arr(Deployment) }) } },
    errors: [404, 503],
  }),
};
