import { quotasOf } from '../quotas.js';
import type { HttpRouter } from '../http-router.js';
import type { ApiContext, ApiRequest } from '../context.js';
import type { AppRow } from '../../store/apps.js';
import { checkDisplayName } from '../../core/names.js';
import { ConflictError, ValidationError } from '../../core/errors.js';
import { nonEmpty } from '../body.js';
import { appForUser, orgForUser } from '../access.js';
import { addonForUser, addonManager, addonView, assertBucketUnnamed } from '../addon-access.js';
import { canonicalProviderName, checkPlan, planOf } from '../addon-plans.js';
import { addonRoutes } from './addons-routes.js';
import { FS_BUCKET } from '../../addons/fs-bucket/fs-bucket-provider.js';
import { refuseExclusiveCreation } from '../../addons/fs-bucket/exclusive-volume.js';

/** Apps listed in `link`: ids the user can reach, all in the add-on's organisation. */
function appsToLink(ctx: ApiRequest, link: readonly string[] | undefined, orgId: string): AppRow[] {
  if (link === undefined) return [];
  const apps = [...new Set(link)].map((id) => appForUser(ctx.deps.store, ctx.user, id));
  for (const app of apps) {
    if (app.org_id !== orgId) {
      throw new ValidationError(
        `The application ${app.name} (${app.id}) is not in the add-on's organisation.`,
        'Only add-ons and applications of the same organisation can be linked.',
      );
    }
  }
  return apps;
}

export function addonHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(addonRoutes.providers, (ctx) => ({
    providers: addonManager(ctx)
      .providerList()
      .map(({ limits, ...p }) => {
        const plan = planOf(p.name);
        return { ...p, plans: plan ? [{ ...plan, ...(limits ? { limits } : {}) }] : [] };
      }),
  }));

  router.handle(addonRoutes.list, ({ user, deps, query }) => {
    const org = query.org;
    const rows = org ? deps.store.addons.listForOrg(orgForUser(deps.store, user, org).id) : deps.store.addons.listForUser(user.id);
    return { addons: rows.map((a) => addonView(deps.store, a, deps.addons)) };
  });

  /** Everything is checked before anything is provisioned; the listed apps are linked once it exists. */
  router.handle(addonRoutes.create, async (ctx) => {
    const { store } = ctx.deps;
    const manager = addonManager(ctx);
    const input = ctx.body;
    const provider = manager.provider(
      canonicalProviderName(nonEmpty('provider', input.provider, '`slipway addon providers` lists them.')),
    ).name;
    checkPlan(provider, input.plan);
    const name = checkDisplayName('add-on', nonEmpty('name', input.name, 'Give the add-on a name.'));
    const org = orgForUser(store, ctx.user, input.org);
    const apps = appsToLink(ctx, input.link, org.id);
    const exclusive = input.exclusive === true;
    if (exclusive && provider !== FS_BUCKET) {
      throw new ValidationError(
        `--exclusive is for FS buckets (a volume one instance mounts at a time); ${provider} add-ons have no such option.`,
        'Leave --exclusive out, or give fs-bucket as the provider.',
      );
    }
    if (exclusive) refuseExclusiveCreation(name, apps);
    quotasOf(ctx.deps).checkNewAddon(org);
    if (store.addons.byName(org.id, name)) {
      throw new ConflictError(
        `The organisation already has an add-on named ${JSON.stringify(name)}.`,
        'Choose another name; `slipway addon list` shows the existing ones.',
      );
    }
    const addon = await manager.create({
      orgId: org.id,
      provider,
      name,
      ...(typeof input.plan === 'string' ? { plan: input.plan } : {}),
      ...(exclusive ? { exclusive } : {}),
    });
    for (const app of apps) store.links.linkAddon(app.id, addon.id);
    return { addon: addonView(store, addon, ctx.deps.addons) };
  });

  router.handle(addonRoutes.get, ({ user, deps, params, query }) => {
    return { addon: addonView(deps.store, addonForUser(deps.store, user, params.addon, query.org), deps.addons) };
  });

  router.handle(addonRoutes.env, (ctx) => {
    const addon = addonForUser(ctx.deps.store, ctx.user, ctx.params.addon, ctx.query.org);
    const env = addonManager(ctx).env(addon);
    return { env: Object.entries(env).map(([name, value]) => ({ name, value })) };
  });

  /** Deleting destroys the data; while apps use the add-on it takes an explicit unlink=1. */
  router.handle(addonRoutes.delete, async (ctx) => {
    const { store } = ctx.deps;
    const addon = addonForUser(store, ctx.user, ctx.params.addon, ctx.query.org);
    const linked = store.links.appsOfAddon(addon.id);
    if (linked.length > 0 && !['1', 'true'].includes(ctx.query.unlink ?? '')) {
      const names = linked.map((id) => store.apps.byId(id)?.name ?? id);
      throw new ConflictError(
        `The add-on ${addon.name} is linked to ${linked.length} application(s): ${names.join(', ')}.`,
        'Unlink them first (`slipway service unlink-addon`), or delete with --unlink (API: ?unlink=1) to unlink and delete at once.',
      );
    }
    assertBucketUnnamed(store, addon, linked);
    await addonManager(ctx).remove(addon);
    return { deleted: addon.id, unlinked: linked };
  });
}
