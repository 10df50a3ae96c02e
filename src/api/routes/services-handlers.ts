import type { HttpRouter } from '../http-router.js';
import type { ApiContext, ApiRequest } from '../context.js';
import type { AppRow } from '../../store/apps.js';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import { appForUser } from '../access.js';
import { addonForApp, addonView, assertBucketUnnamed } from '../addon-access.js';
import { serviceRoutes } from './services-routes.js';
import { refuseExclusiveLink } from '../../addons/fs-bucket/exclusive-volume.js';

/**
 * Service dependencies of an app: the add-ons whose variables it receives and the apps whose
 * exposed configuration it receives. Links change the environment of the next deployment or
 * restart; they do not redeploy by themselves.
 */
function servicesView(ctx: ApiRequest, app: AppRow) {
  const { store } = ctx.deps;
  return {
    addons: store.links.addonsOf(app.id).map((a) => addonView(store, a, ctx.deps.addons)),
    apps: store.links.targetsOf(app.id).map((a) => ({ id: a.id, name: a.name })),
  };
}

function linkedAppTarget(ctx: ApiRequest, app: AppRow, ref: string): AppRow {
  if (ref === '') throw new ValidationError('Missing field "app" (the id of the application to link).');
  const target = appForUser(ctx.deps.store, ctx.user, ref);
  if (target.id === app.id) throw new ValidationError('An application cannot be linked to itself.');
  if (target.org_id !== app.org_id) {
    throw new ValidationError(
      `The application ${target.name} is in another organisation.`,
      'Only applications of the same organisation can be linked.',
    );
  }
  return target;
}

export function serviceHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(serviceRoutes.list, (ctx) => servicesView(ctx, appForUser(ctx.deps.store, ctx.user, ctx.params.app)));

  router.handle(serviceRoutes.linkAddon, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const addon = addonForApp(ctx.deps.store, ctx.user, app, ctx.body.addon);
    refuseExclusiveLink(ctx.deps.store, addon, app);
    ctx.deps.store.links.linkAddon(app.id, addon.id);
    return servicesView(ctx, app);
  });

  router.handle(serviceRoutes.unlinkAddon, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const addon = addonForApp(ctx.deps.store, ctx.user, app, ctx.params.addon);
    assertBucketUnnamed(ctx.deps.store, addon, [app.id]);
    if (!ctx.deps.store.links.unlinkAddon(app.id, addon.id)) {
      throw new NotFoundError(
        `The application ${app.name} is not linked to the add-on ${addon.name}.`,
        '`slipway service` lists its links.',
      );
    }
    return servicesView(ctx, app);
  });

  router.handle(serviceRoutes.linkApp, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const target = linkedAppTarget(ctx, app, ctx.body.app);
    ctx.deps.store.links.linkApp(app.id, target.id);
    return servicesView(ctx, app);
  });

  router.handle(serviceRoutes.unlinkApp, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const target = appForUser(ctx.deps.store, ctx.user, ctx.params.target);
    if (!ctx.deps.store.links.unlinkApp(app.id, target.id)) {
      throw new NotFoundError(`The application ${app.name} is not linked to ${target.name}.`, '`slipway service` lists its links.');
    }
    return servicesView(ctx, app);
  });
}
