import type { HttpRouter } from '../http-router.js';
import type { ApiContext, ApiRequest } from '../context.js';
import type { AppRow } from '../../store/apps.js';
import { checkEnvName, checkEnvValue } from '../../core/names.js';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import { appForUser } from '../access.js';
import { redeployConsumers, type ConsumerRedeploy } from '../../links/redeploy-consumers.js';
import { publishedConfigRoutes } from './published-config-routes.js';

/**
 * The configuration an app exposes to the apps linked to it. Changing it restarts those apps
 * (their current release, with the new values) so they never run on stale settings.
 */
function changed(ctx: ApiRequest, app: AppRow): ConsumerRedeploy[] {
  const deployer = ctx.deps.services?.deployer;
  return deployer ? redeployConsumers(ctx.deps.store, deployer, app, ctx.user.id) : [];
}

export function publishedConfigHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(publishedConfigRoutes.list, ({ user, deps, params }) => {
    const app = appForUser(deps.store, user, params.app);
    return { published_config: deps.store.publishedConfig.list(app.id) };
  });

  router.handle(publishedConfigRoutes.set, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    // Consumers may be of any type, so exposed names follow the strictest rule (Node's).
    const name = checkEnvName(ctx.params.name, 'node');
    const value = checkEnvValue(name, ctx.body.value);
    const redeployed = ctx.deps.store.publishedConfig.set(app.id, name, value) ? changed(ctx, app) : [];
    return { published_config: ctx.deps.store.publishedConfig.list(app.id), redeployed };
  });

  router.handle(publishedConfigRoutes.remove, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    if (!ctx.deps.store.publishedConfig.remove(app.id, ctx.params.name)) {
      throw new NotFoundError(
        `The application exposes no ${JSON.stringify(ctx.params.name)}.`,
        '`slipway published-config` lists what it exposes.',
      );
    }
    return { published_config: ctx.deps.store.publishedConfig.list(app.id), redeployed: changed(ctx, app) };
  });

  /** Replaces everything the app exposes; nothing is written unless every entry is valid. */
  router.handle(publishedConfigRoutes.replace, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const seen = new Set<string>();
    const vars = ctx.body.published_config.map((entry) => {
      const name = checkEnvName(entry.name, 'node');
      if (seen.has(name)) throw new ValidationError(`Variable ${name} is given twice.`, 'Keep one value per name.');
      seen.add(name);
      return { name, value: checkEnvValue(name, entry.value) };
    });
    const redeployed = ctx.deps.store.publishedConfig.replaceAll(app.id, vars) ? changed(ctx, app) : [];
    return { published_config: ctx.deps.store.publishedConfig.list(app.id), redeployed };
  });
}
