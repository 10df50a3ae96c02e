import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { appForUser } from '../access.js';
import { APP_SETTINGS, checkSettingName, parseSettingValue, settingsFrom } from '../../core/app-settings.js';
import { SlipwayError } from '../../core/errors.js';
import { deploymentView } from './deployments-handlers.js';
import { appConfigRoutes } from './app-config-routes.js';

/** The platform's per-application settings, and cancelling a running deployment. */
export function appConfigHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(appConfigRoutes.list, ({ user, deps, params }) => {
    const app = appForUser(deps.store, user, params.app);
    const values = settingsFrom(deps.store.appConfig.all(app.id));
    return {
      config: Object.entries(values).map(([name, value]) => ({
        name,
        value,
        description: APP_SETTINGS[name as keyof typeof APP_SETTINGS].description,
      })),
    };
  });

  router.handle(appConfigRoutes.set, async ({ user, deps, params, body }) => {
    const app = appForUser(deps.store, user, params.app);
    const name = checkSettingName(params.name);
    const value = parseSettingValue(name, body.value);
    deps.store.appConfig.set(app.id, name, String(value));
    // The route carries force-https: the router answers plain HTTP with a redirect from now on.
    if (name === 'force-https') await deps.services?.runtime.applyRoutes();
    return { name, value };
  });

  router.handle(appConfigRoutes.cancel, ({ user, deps, params }) => {
    const app = appForUser(deps.store, user, params.app);
    if (!deps.services) throw new SlipwayError(503, 'unavailable', 'Deployments are not available on this daemon.');
    const ids = deps.services.deployer.cancel(app.id, `cancelled by ${user.name}`);
    return { cancelled: ids.map((id) => deploymentView(deps.store.deployments.byId(id)!)) };
  });
}
