import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { checkAppType, checkDisplayName, checkRegion } from '../../core/names.js';
import { appTypes } from '../../providers/registry.js';
import { requireString } from '../body.js';
import { appForUser, orgForUser } from '../access.js';
import { appView } from '../platform.js';
import { SlipwayError } from '../../core/errors.js';
import { appSpecs } from './apps-routes.js';
import { quotasOf } from '../quotas.js';

export function appRoutes(router: HttpRouter<ApiContext>): void {
  router.add('GET', '/v1/app-types', appSpecs.types, () => ({ types: appTypes() }));

  router.add('GET', '/v1/apps', appSpecs.list, ({ user, deps, query }) => {
    const org = query.get('org');
    const apps = org ? deps.store.apps.listForOrg(orgForUser(deps.store, user, org).id) : deps.store.apps.listForUser(user.id);
    return { apps: apps.map((a) => appView(deps.endpoints, a, deps.store.orgs.byId(a.org_id)?.name, deps.store.domains.favourite(a.id))) };
  });

  router.add('POST', '/v1/apps', appSpecs.create, async ({ user, deps, body }) => {
    const input = await body();
    const type = checkAppType(input.type, appTypes());
    const name = checkDisplayName('application', requireString(input, 'name', 'Give the application a name.'));
    const region = checkRegion(input.region ?? 'par');
    const org = orgForUser(deps.store, user, input.org);
    quotasOf(deps).checkNewApp(org);
    const app = deps.store.apps.create({ orgId: org.id, name, type, region });
    // The router knows the new domain from now on: 503 (nothing deployed yet) instead of 404.
    await deps.services?.runtime.applyRoutes();
    return { app: appView(deps.endpoints, app, org.name, deps.store.domains.favourite(app.id)) };
  });

  router.add('DELETE', '/v1/apps/:app', appSpecs.delete, async ({ user, deps, params }) => {
    const app = appForUser(deps.store, user, params.app!);
    if (!deps.services?.removeApp) throw new SlipwayError(503, 'unavailable', 'Applications cannot be deleted on this daemon.');
    await deps.services.removeApp(app);
    return { deleted: app.id };
  });

  router.add('GET', '/v1/apps/:app', appSpecs.get, ({ user, deps, params }) => {
    const app = appForUser(deps.store, user, params.app!);
    return { app: appView(deps.endpoints, app, deps.store.orgs.byId(app.org_id)?.name, deps.store.domains.favourite(app.id)) };
  });
}
