import { orgOfApp, quotasOf } from '../quotas.js';
import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { checkEnvName, checkEnvValue } from '../../core/names.js';
import { ValidationError, NotFoundError } from '../../core/errors.js';
import { appForUser } from '../access.js';
import { appEnvForDisplay } from '../../links/app-environment.js';
import { checkHealthCheckVariable } from '../../healthcheck/health-check-paths.js';
import { checkCronTimeoutVariable } from '../../cron/cron-timeout.js';
import { envRoutes } from './env-routes.js';

export function envHandlers(router: HttpRouter<ApiContext>): void {
  /** ?all=1 adds every source the app receives, in the order of src/core/merge-env.ts. */
  router.handle(envRoutes.list, ({ user, deps, params, query }) => {
    const app = appForUser(deps.store, user, params.app);
    const env = deps.store.env.list(app.id);
    if (query.all === '1' && deps.addons) return { env, sections: appEnvForDisplay(deps.store, deps.addons, app.id) };
    return { env };
  });

  router.handle(envRoutes.set, ({ user, deps, params, body }) => {
    const app = appForUser(deps.store, user, params.app);
    const name = checkEnvName(params.name, app.type);
    const value = checkEnvValue(name, body.value);
    checkHealthCheckVariable(name, value);
    checkCronTimeoutVariable(name, value);
    quotasOf(deps).checkEnv(orgOfApp(deps, app), app, { ...deps.store.env.asRecord(app.id), [name]: value });
    deps.store.env.set(app.id, name, value);
    return { env: deps.store.env.list(app.id) };
  });

  router.handle(envRoutes.remove, ({ user, deps, params }) => {
    const app = appForUser(deps.store, user, params.app);
    if (!deps.store.env.remove(app.id, params.name)) {
      throw new NotFoundError(`The application has no variable ${JSON.stringify(params.name)}.`, '`slipway env` lists its variables.');
    }
    return { env: deps.store.env.list(app.id) };
  });

  /** Replaces every variable at once; nothing is written unless every entry is valid. */
  router.handle(envRoutes.replace, ({ user, deps, params, body }) => {
    const app = appForUser(deps.store, user, params.app);
    const seen = new Set<string>();
    const vars = body.env.map(({ name, value }) => {
      const checked = checkEnvName(name, app.type);
      if (seen.has(checked)) throw new ValidationError(`Variable ${checked} is given twice.`, 'Keep one value per name.');
      seen.add(checked);
      const checkedValue = checkEnvValue(checked, value);
      checkHealthCheckVariable(checked, checkedValue);
      checkCronTimeoutVariable(checked, checkedValue);
      return { name: checked, value: checkedValue };
    });
    quotasOf(deps).checkEnv(orgOfApp(deps, app), app, Object.fromEntries(vars.map((v) => [v.name, v.value])));
    deps.store.env.replaceAll(app.id, vars);
    return { env: deps.store.env.list(app.id) };
  });
}
