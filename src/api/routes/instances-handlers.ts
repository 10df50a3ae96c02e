import type { ScaleView } from '../../shared/api-types.js';
import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { appForUser, requireAdmin } from '../access.js';
import { DEFAULT_APP_DISK_BUDGET, parseDiskBudget } from '../../core/disk-size.js';
import { SlipwayError, ValidationError } from '../../core/errors.js';
import { DEFAULT_BUILD_FLAVOR, DEFAULT_INSTANCE_FLAVOR, flavorNamed } from '../../core/flavors.js';
import type { AppRow } from '../../store/apps.js';
import { instanceRoutes } from './instances-routes.js';
import { orgOfApp, quotasOf } from '../quotas.js';

/** How an app is scaled: its instance count and the flavours of its instances and builds. */
export function scaleView(app: AppRow, defaultDiskBudget = DEFAULT_APP_DISK_BUDGET): ScaleView {
  const flavor = flavorNamed(app.flavor ?? DEFAULT_INSTANCE_FLAVOR);
  const build = flavorNamed(app.build_flavor ?? DEFAULT_BUILD_FLAVOR);
  return {
    instances: app.instances ?? 1,
    flavor: flavor.name,
    memory_bytes: flavor.memoryBytes,
    build_flavor: build.name,
    build_memory_bytes: build.memoryBytes,
    disk_budget_bytes: app.disk_budget_bytes ?? defaultDiskBudget,
  };
}

export const MAX_INSTANCES = 40;

/** Parses an instance count: a whole number from 1 to MAX_INSTANCES. */
export function checkInstanceCount(value: unknown): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_INSTANCES) {
    throw new ValidationError(
      `The instance count is a whole number from 1 to ${MAX_INSTANCES}, not ${JSON.stringify(value)}.`,
      'For example: slipway scale --instances 3',
    );
  }
  return n;
}

/** Where the daemon may not resize a mounted filesystem (no CAP_SYS_RESOURCE), a larger budget waits for the next mount. */
const DISK_AT_NEXT_MOUNT =
  "The new disk budget is recorded; this machine does not let the daemon grow a mounted filesystem, so the app's filesystem grows to it at its next mount (after `slipway system stop` and a start of the daemon).";

/** What `PUT /v1/apps/:app/scale` accepts; a misspelt field is refused rather than ignored. */
const SCALE_FIELDS = ['flavor', 'buildFlavor', 'instances', 'disk'];

/**
 * Scaling: the instance count applies at once to the running release; a flavour applies at
 * the next deployment or restart (the instances running keep their sandbox).
 */
export function instanceHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(instanceRoutes.getScale, ({ user, deps, params }) => {
    const app = appForUser(deps.store, user, params.app);
    return { scale: scaleView(app, deps.defaultDiskBudget) };
  });

  router.handle(instanceRoutes.setScale, async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const body = ctx.body;
    const unknown = Object.keys(body).filter((key) => !SCALE_FIELDS.includes(key));
    if (unknown.length > 0) {
      throw new ValidationError(
        `Unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => JSON.stringify(k.slice(0, 40))).join(', ')} in the scale request.`,
        `Give ${SCALE_FIELDS.join(', ')}, e.g. {"flavor": "XS", "buildFlavor": "S"}.`,
      );
    }
    const flavor = body.flavor === undefined ? undefined : flavorNamed(body.flavor).name;
    const buildFlavor = body.buildFlavor === undefined ? undefined : flavorNamed(body.buildFlavor).name;
    const count = body.instances === undefined ? undefined : checkInstanceCount(body.instances);
    const disk = body.disk === undefined ? undefined : parseDiskBudget(String(body.disk));
    let note: string | undefined;
    if (flavor === undefined && buildFlavor === undefined && count === undefined && disk === undefined) {
      throw new ValidationError('Nothing to change.', 'Give flavor, buildFlavor, instances and/or disk.');
    }
    quotasOf(ctx.deps).checkScale(orgOfApp(ctx.deps, app), app, { instances: count, flavor });
    if (disk !== undefined) {
      // The budget bounds what a tenant may take of the machine's disk: the operator's call.
      requireAdmin(ctx.user);
      const applies = (await ctx.deps.services?.disks?.setBudget(app.id, disk)) ?? 'now';
      ctx.deps.store.apps.setDiskBudget(app.id, disk);
      if (applies !== 'now') note = DISK_AT_NEXT_MOUNT;
    }
    ctx.deps.store.apps.setFlavors(app.id, { flavor, buildFlavor });
    if (count !== undefined) {
      ctx.deps.store.apps.setInstances(app.id, count);
      const runtime = ctx.deps.services?.runtime;
      if (runtime) await runtime.scale(app, (line) => ctx.deps.services?.logs.append(app.id, 'system', line));
    }
    return { scale: scaleView(ctx.deps.store.apps.byId(app.id)!, ctx.deps.defaultDiskBudget), ...(note ? { note } : {}) };
  });

  router.handle(instanceRoutes.setInstances, async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const count = checkInstanceCount(ctx.body.count);
    const runtime = ctx.deps.services?.runtime;
    if (!runtime) throw new SlipwayError(503, 'unavailable', 'Instances are not available on this daemon.');
    quotasOf(ctx.deps).checkScale(orgOfApp(ctx.deps, app), app, { instances: count });
    ctx.deps.store.apps.setInstances(app.id, count);
    await runtime.scale(app, (line) => ctx.deps.services?.logs.append(app.id, 'system', line));
    return { instances: count, running: runtime.instancesOf(app.id).length };
  });
}
