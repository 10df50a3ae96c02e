import { route } from '../route-spec.js';
import { arr, bool, obj, oneOf, str } from '../schema.js';
import { Addon, AddonProvider, EnvList } from '../schemas.js';
import { ORG_FILTER } from './apps-routes.js';

const ADDON = { addon: 'Add-on id, or name (with ?org= when several of your organisations have one of that name)' };
const ORG_OF_NAME = { org: { schema: str(), description: 'The organisation of an add-on given by name' } };

export const addonRoutes = {
  providers: route({
    route: 'GET /v1/addon-providers',
    operationId: 'listAddonProviders',
    tag: 'Add-ons',
    summary: 'Add-on providers this daemon offers, with their plan',
    success: { status: 200, response: { description: 'The providers', schema: obj({ providers: arr(AddonProvider) }) } },
    errors: [503],
  }),
  list: route({
    route: 'GET /v1/addons',
    operationId: 'listAddons',
    tag: 'Add-ons',
    summary: 'Add-ons of your organisations (optionally of one: ?org=), with the ids of the applications linked to each',
    query: ORG_FILTER,
    success: { status: 200, response: { description: 'The add-ons', schema: obj({ addons: arr(Addon) }) } },
    errors: [404],
  }),
  create: route({
    route: 'POST /v1/addons',
    operationId: 'createAddon',
    tag: 'Add-ons',
    summary: 'Create (provision) an add-on, and link applications of its organisation to it',
    body: obj(
      {
        provider: str('postgresql, redis or fs-bucket (postgresql-addon and redis-addon also work)'),
        name: str('Unique in its organisation'),
        org: str('Organisation id or name'),
        link: arr(str(), 'Ids of applications of that organisation to link'),
        plan: str(
          "The provider's one plan (see /v1/addon-providers), or an fs-bucket's size (512M, 1G, 20G; 1G when left out); may be left out",
        ),
        exclusive: bool(
          'An fs-bucket only: an exclusive volume, mounted by one instance of one application at a time (SQLite); a deploy hands it over while the router holds requests',
        ),
      },
      ['link', 'plan', 'exclusive'],
    ),
    success: { status: 201, response: { description: 'The add-on', schema: obj({ addon: Addon }) } },
    errors: [404, 409, 503],
  }),
  get: route({
    route: 'GET /v1/addons/:addon',
    operationId: 'getAddon',
    tag: 'Add-ons',
    summary: 'One add-on',
    params: ADDON,
    query: ORG_OF_NAME,
    success: { status: 200, response: { description: 'The add-on', schema: obj({ addon: Addon }) } },
    errors: [404, 409],
  }),
  env: route({
    route: 'GET /v1/addons/:addon/env',
    operationId: 'getAddonEnv',
    tag: 'Add-ons',
    summary: 'The variables a linked application receives from the add-on (credentials included)',
    params: ADDON,
    query: ORG_OF_NAME,
    success: { status: 200, response: { description: 'The variables', schema: obj({ env: EnvList }) } },
    errors: [404, 409, 503],
  }),
  delete: route({
    route: 'DELETE /v1/addons/:addon',
    operationId: 'deleteAddon',
    tag: 'Add-ons',
    summary: 'Delete an add-on and its data; refused (409) while linked unless ?unlink=1',
    params: ADDON,
    query: {
      ...ORG_OF_NAME,
      unlink: { schema: oneOf(['0', '1', 'true', 'false']), description: '1: unlink it from its applications first' },
    },
    success: {
      status: 200,
      response: { description: 'The add-on deleted and the applications unlinked', schema: obj({ deleted: str(), unlinked: arr(str()) }) },
    },
    errors: [404, 409, 503],
  }),
};
