import { route } from '../route-spec.js';
import { obj, str } from '../schema.js';
import { Services } from '../schemas.js';
import { APP_PARAM } from './apps-routes.js';

const services = { description: 'The links after the change', schema: Services };

export const serviceRoutes = {
  list: route({
    route: 'GET /v1/apps/:app/services',
    operationId: 'listServices',
    tag: 'Services',
    summary: 'Service dependencies: the linked add-ons and applications',
    params: APP_PARAM,
    success: { status: 200, response: { description: 'The links', schema: Services } },
    errors: [404],
  }),
  linkAddon: route({
    route: 'POST /v1/apps/:app/services/addons',
    operationId: 'linkAddon',
    tag: 'Services',
    summary: 'Link an add-on of the same organisation: the application receives its variables',
    params: APP_PARAM,
    body: obj({ addon: str('Add-on id or name') }),
    success: { status: 201, response: services },
    errors: [404, 409],
  }),
  unlinkAddon: route({
    route: 'DELETE /v1/apps/:app/services/addons/:addon',
    operationId: 'unlinkAddon',
    tag: 'Services',
    summary: 'Unlink an add-on',
    params: { ...APP_PARAM, addon: 'Add-on id or name' },
    success: { status: 200, response: services },
    errors: [404, 409],
  }),
  linkApp: route({
    route: 'POST /v1/apps/:app/services/apps',
    operationId: 'linkApp',
    tag: 'Services',
    summary: 'Link another application of the same organisation: this one receives its exposed configuration',
    params: APP_PARAM,
    body: obj({ app: str('Id of the application to link') }),
    success: { status: 201, response: services },
    errors: [404],
  }),
  unlinkApp: route({
    route: 'DELETE /v1/apps/:app/services/apps/:target',
    operationId: 'unlinkApp',
    tag: 'Services',
    summary: 'Unlink an application',
    params: { ...APP_PARAM, target: 'Id of the linked application' },
    success: { status: 200, response: services },
    errors: [404],
  }),
};
