import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { checkAppType, checkDisplayName, checkRegion } from '../../core/names.js';
import { appTypes } from '../../providers/registry.js';
import { nonEmpty } from '../body.js';
import { appForUser, orgForUser } from '../access.js';
import { appView } from '../platform.js';
import { SlipwayError } from '../../core/errors.js';
import { appRoutes } from './apps-routes.js';
import { quotasOf } from '../quotas.js';

export function appHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(appRoutes.types, () => ({ types: appTypes() }));

  router.handle(appRoutes.list, ({ user, deps, query }) => {
    const org = query.org;
    const apps = org ? deps.store.apps.listForOrg(orgForUser(deps.store, user, org).id) : deps.store.apps.listForUser(user.id);
    return { apps: apps.map((a) => appView(deps.endpoints, a, deps.store.orgs.byId(a.org_id)?.name, deps.store.domains.favourite(a.id))) };
  });

  router.handle(appRoutes.create, async ({ user, deps, body }) => {
    const input = body;
    const type = checkAppType(input.type, appTypes());
    const name = checkDisplayName('application', nonEmpty('name', input.name, 'Give the application a name.'));
    const region = checkRegion(input.region ?? 'par');
    const org = orgForUser(deps.store, user, input.org);
    quotasOf(deps).checkNewApp(org);
    const app = deps.store.apps.create({ orgId: org.id, name, type, region });
    // The router knows the new domain from now on: 503 (nothing deployed yet) instead of 404.
    await deps.services?.runtime.applyRoutes();
    return { app: appView(deps.endpoints, app, org.name, deps.store.domains.favourite(app.id)) };
  });

  router.handle(appRoutes.delete, async ({ user, deps, params }) => {
    const app = appForUser(deps.store, user, params.app);
    if (!deps.services?.removeApp) throw new SlipwayError(503, 'unavailable', 'Applications cannot be deleted on this daemon.');
    await deps.services.removeApp(app);
    return { deleted: app.id };
  });

  router.handle(appRoutes.get, ({ user, deps, params }) => {
    const app = appForUser(deps.store, user, params.app);
    return { app: appView(deps.endpoints, app, deps.store.orgs.byId(app.org_id)?.name, deps.store.domains.favourite(app.id)) };
  });
}
