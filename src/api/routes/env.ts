import { orgOfApp, quotasOf } from '../quotas.js';
import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { checkEnvName, checkEnvValue } from '../../core/names.js';
import { ValidationError, NotFoundError } from '../../core/errors.js';
import { appForUser } from '../access.js';
import { appEnvForDisplay } from '../../links/app-environment.js';
import { checkHealthCheckVariable } from '../../healthcheck/health-check-paths.js';
import { checkCronTimeoutVariable } from '../../cron/cron-timeout.js';
import { envSpecs } from './env-routes.js';

export function envRoutes(router: HttpRouter<ApiContext>): void {
  /** ?all=1 adds every source the app receives, in the order of src/core/merge-env.ts. */
  router.add('GET', '/v1/apps/:app/env', envSpecs.list, ({ user, deps, params, query }) => {
    const app = appForUser(deps.store, user, params.app!);
    const env = deps.store.env.list(app.id);
    if (query.get('all') === '1' && deps.addons) return { env, sections: appEnvForDisplay(deps.store, deps.addons, app.id) };
    return { env };
  });

  router.add('PUT', '/v1/apps/:app/env/:name', envSpecs.set, async ({ user, deps, params, body }) => {
    const app = appForUser(deps.store, user, params.app!);
    const name = checkEnvName(params.name, app.type);
    const value = checkEnvValue(name, (await body()).value);
    checkHealthCheckVariable(name, value);
    checkCronTimeoutVariable(name, value);
    quotasOf(deps).checkEnv(orgOfApp(deps, app), app, { ...deps.store.env.asRecord(app.id), [name]: value });
    deps.store.env.set(app.id, name, value);
    return { env: deps.store.env.list(app.id) };
  });

  router.add('DELETE', '/v1/apps/:app/env/:name', envSpecs.remove, ({ user, deps, params }) => {
    const app = appForUser(deps.store, user, params.app!);
    if (!deps.store.env.remove(app.id, params.name!)) {
      throw new NotFoundError(`The application has no variable ${JSON.stringify(params.name)}.`, '`slipway env` lists its variables.');
    }
    return { env: deps.store.env.list(app.id) };
  });

  /** Replaces every variable at once; nothing is written unless every entry is valid. */
  router.add('PUT', '/v1/apps/:app/env', envSpecs.replace, async ({ user, deps, params, body }) => {
    const app = appForUser(deps.store, user, params.app!);
    const list = (await body()).env;
    if (!Array.isArray(list)) {
      throw new ValidationError('Field "env" must be an array of {"name", "value"} objects.');
    }
    const seen = new Set<string>();
    const vars = list.map((entry, index) => {
      if (entry === null || typeof entry !== 'object') throw new ValidationError(`Entry ${index} is not a {"name", "value"} object.`);
      const { name, value } = entry as { name?: unknown; value?: unknown };
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
