import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import type { AppRow } from '../../store/apps.js';
import { checkEnvName, checkEnvValue } from '../../core/names.js';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import { appForUser } from '../access.js';
import { redeployConsumers, type ConsumerRedeploy } from '../../links/redeploy-consumers.js';
import { publishedConfigSpecs } from './published-config-routes.js';

/**
 * The configuration an app exposes to the apps linked to it. Changing it restarts those apps
 * (their current release, with the new values) so they never run on stale settings.
 */
function changed(ctx: ApiContext, app: AppRow): ConsumerRedeploy[] {
  const deployer = ctx.deps.services?.deployer;
  return deployer ? redeployConsumers(ctx.deps.store, deployer, app, ctx.user.id) : [];
}

export function publishedConfigRoutes(router: HttpRouter<ApiContext>): void {
  router.add('GET', '/v1/apps/:app/published-config', publishedConfigSpecs.list, ({ user, deps, params }) => {
    const app = appForUser(deps.store, user, params.app!);
    return { published_config: deps.store.publishedConfig.list(app.id) };
  });

  router.add('PUT', '/v1/apps/:app/published-config/:name', publishedConfigSpecs.set, async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app!);
    // Consumers may be of any type, so exposed names follow the strictest rule (Node's).
    const name = checkEnvName(ctx.params.name, 'node');
    const value = checkEnvValue(name, (await ctx.body()).value);
    const redeployed = ctx.deps.store.publishedConfig.set(app.id, name, value) ? changed(ctx, app) : [];
    return { published_config: ctx.deps.store.publishedConfig.list(app.id), redeployed };
  });

  router.add('DELETE', '/v1/apps/:app/published-config/:name', publishedConfigSpecs.remove, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app!);
    if (!ctx.deps.store.publishedConfig.remove(app.id, ctx.params.name!)) {
      throw new NotFoundError(
        `The application exposes no ${JSON.stringify(ctx.params.name)}.`,
        '`slipway published-config` lists what it exposes.',
      );
    }
    return { published_config: ctx.deps.store.publishedConfig.list(app.id), redeployed: changed(ctx, app) };
  });

  /** Replaces everything the app exposes; nothing is written unless every entry is valid. */
  router.add('PUT', '/v1/apps/:app/published-config', publishedConfigSpecs.replace, async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app!);
    const list = (await ctx.body()).published_config;
    if (!Array.isArray(list)) throw new ValidationError('Field "published_config" must be an array of {"name", "value"} objects.');
    const seen = new Set<string>();
    const vars = list.map((entry, index) => {
      if (entry === null || typeof entry !== 'object') throw new ValidationError(`Entry ${index} is not a {"name", "value"} object.`);
      const name = checkEnvName((entry as { name?: unknown }).name, 'node');
      if (seen.has(name)) throw new ValidationError(`Variable ${name} is given twice.`, 'Keep one value per name.');
      seen.add(name);
      return { name, value: checkEnvValue(name, (entry as { value?: unknown }).value) };
    });
    const redeployed = ctx.deps.store.publishedConfig.replaceAll(app.id, vars) ? changed(ctx, app) : [];
    return { published_config: ctx.deps.store.publishedConfig.list(app.id), redeployed };
  });
}
