import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { appForUser } from '../access.js';
import { APP_SETTINGS, checkSettingName, parseSettingValue, settingsFrom } from '../../core/app-settings.js';
import { SlipwayError } from '../../core/errors.js';
import { deploymentView } from './deployments.js';
import { appConfigSpecs } from './app-config-routes.js';

/** The platform's per-application settings, and cancelling a running deployment. */
export function appConfigRoutes(router: HttpRouter<ApiContext>): void {
  router.add('GET', '/v1/apps/:app/config', appConfigSpecs.list, ({ user, deps, params }) => {
    const app = appForUser(deps.store, user, params.app!);
    const values = settingsFrom(deps.store.appConfig.all(app.id));
    return {
      config: Object.entries(values).map(([name, value]) => ({
        name,
        value,
        description: APP_SETTINGS[name as keyof typeof APP_SETTINGS].description,
      })),
    };
  });

  router.add('PUT', '/v1/apps/:app/config/:name', appConfigSpecs.set, async ({ user, deps, params, body }) => {
    const app = appForUser(deps.store, user, params.app!);
    const name = checkSettingName(params.name!);
    const value = parseSettingValue(name, (await body()).value);
    deps.store.appConfig.set(app.id, name, String(value));
    // The route carries force-https: the router answers plain HTTP with a redirect from now on.
    if (name === 'force-https') await deps.services?.runtime.applyRoutes();
    return { name, value };
  });

  router.add('POST', '/v1/apps/:app/deployments/cancel', appConfigSpecs.cancel, ({ user, deps, params }) => {
    const app = appForUser(deps.store, user, params.app!);
    if (!deps.services) throw new SlipwayError(503, 'unavailable', 'Deployments are not available on this daemon.');
    const ids = deps.services.deployer.cancel(app.id, `cancelled by ${user.name}`);
    return { cancelled: ids.map((id) => deploymentView(deps.store.deployments.byId(id)!)) };
  });
}
