import { route } from '../route-spec.js';
import { arr, obj, str } from '../schema.js';
import { App } from '../schemas.js';
import { appTypes } from '../../providers/registry.js';

export const APP_PARAM = { app: 'Application id (app_<uuid>)' };
export const ORG_FILTER = { org: { schema: str(), description: 'Only those of this organisation (id or name)' } };

export const appRoutes = {
  types: route({
    route: 'GET /v1/app-types',
    operationId: 'listAppTypes',
    tag: 'Applications',
    summary: 'The application types this platform builds, one per runtime provider, with how to name each',
    success: {
      status: 200,
      response: {
        description: 'The types',
        schema: obj({ types: arr(obj({ name: str('What `type` takes'), label: str('The runtimes it covers') })) }),
      },
    },
    errors: [],
  }),
  list: route({
    route: 'GET /v1/apps',
    operationId: 'listApps',
    tag: 'Applications',
    summary: 'Your applications (optionally of one organisation: ?org=)',
    query: ORG_FILTER,
    success: { status: 200, response: { description: 'The applications', schema: obj({ apps: arr(App) }) } },
    errors: [404],
  }),
  create: route({
    route: 'POST /v1/apps',
    operationId: 'createApp',
    tag: 'Applications',
    summary: 'Create an application',
    body: obj(
      {
        type: str(
          appTypes()
            .map((t) => `${t.name} (${t.label})`)
            .join(', '),
        ),
        name: str('Unique in its organisation'),
        region: str('par (default) or mtl'),
        org: str('Organisation id or name'),
      },
      ['region'],
    ),
    success: { status: 201, response: { description: 'The application, with its git URL and domain', schema: obj({ app: App }) } },
    errors: [404, 409],
  }),
  get: route({
    route: 'GET /v1/apps/:app',
    operationId: 'getApp',
    tag: 'Applications',
    summary: 'One application with its git URL and domain',
    params: APP_PARAM,
    success: { status: 200, response: { description: 'The application', schema: obj({ app: App }) } },
    errors: [404],
  }),
  delete: route({
    route: 'DELETE /v1/apps/:app',
    operationId: 'deleteApp',
    tag: 'Applications',
    summary: 'Delete an application: its instances, repository, releases, caches and user (its add-ons stay)',
    params: APP_PARAM,
    success: { status: 200, response: { description: 'The id of the deleted application', schema: obj({ deleted: str() }) } },
    errors: [404, 503],
  }),
};
