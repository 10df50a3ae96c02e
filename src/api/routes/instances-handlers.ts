import type { ScaleView } from '../../shared/api-types.js';
import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { appForUser, requireAdmin } from '../access.js';
import { DEFAULT_APP_DISK_BUDGET, parseDiskBudget } from '../../core/disk-size.js';
import { SlipwayError, ValidationError } from '../../core/errors.js';
import { DEFAULT_BUILD_FLAVOR, DEFAULT_INSTANCE_FLAVOR, flavorNamed } from '../../core/flavors.js';
import type { AppRow } from '../../store/apps.js';
import type { AppRuntime } from '../../serving/app-runtime.js';
import { instanceRoutes } from './instances-routes.js';
import { orgOfApp, quotasOf } from '../quotas.js';
import { rangesOf, workerRangeOf } from '../../core/scaling-ranges.js';
import type { Instance } from '../../instances/backend.js';
import { workerRangeChange } from '../worker-range-change.js';
import { describeSettings, effectiveSettings, parseAutoscalingOverrides, storedOverrides } from '../../autoscaling/settings.js';
import type { ScalingDecisionRow } from '../../store/scaling-decisions.js';
import { scalingChange } from '../scaling-change.js';
import { checkInstanceCount } from '../instance-count.js';
import { workersFrom } from '../../serving/workers.js';
import { refuseScaleOverExclusive } from '../../addons/fs-bucket/exclusive-volume.js';

/**
 * How an app is scaled: its instance count and the flavours of its instances and builds, the
 * ranges the autoscaler keeps them in, its settings and latest decisions.
 */
export function scaleView(
  app: AppRow,
  defaultDiskBudget = DEFAULT_APP_DISK_BUDGET,
  decisions: ScalingDecisionRow[] = [],
  hasWorkers = false,
  workerInstances: readonly Instance[] = [],
): ScaleView {
  const flavor = flavorNamed(app.flavor ?? DEFAULT_INSTANCE_FLAVOR);
  const build = flavorNamed(app.build_flavor ?? DEFAULT_BUILD_FLAVOR);
  const ranges = rangesOf(app);
  const workers = workerRangeOf(app);
  return {
    instances: app.instances ?? 1,
    flavor: flavor.name,
    memory_bytes: flavor.memoryBytes,
    build_flavor: build.name,
    build_memory_bytes: build.memoryBytes,
    disk_budget_bytes: app.disk_budget_bytes ?? defaultDiskBudget,
    min_instances: ranges.minInstances,
    max_instances: ranges.maxInstances,
    min_flavor: ranges.minFlavor,
    max_flavor: ranges.maxFlavor,
    autoscaling: describeSettings(effectiveSettings(app.autoscaling_json)),
    asleep_since: app.asleep_since ?? null,
    // Workers of their own range run in worker instances, which go on while the web instances sleep.
    ...(ranges.minInstances === 0 && hasWorkers && !workers ? { sleeps: false } : {}),
    workers: workers ? { ...workers, running: workerInstances.map((i) => ({ id: i.id, state: i.state() })) } : null,
    decisions: decisions.map((d) => ({
      at: d.at,
      direction: d.direction,
      from: d.from_instances,
      to: d.to_instances,
      from_flavor: d.from_flavor ?? null,
      to_flavor: d.to_flavor ?? null,
      reason: d.reason,
      outcome: d.outcome,
      target: d.target ?? 'instances',
    })),
  };
}

/** The scale view with the app's latest decisions, as both routes answer it. */
function scaleViewOf(deps: ApiContext['deps'], app: AppRow): ScaleView {
  const hasWorkers = workersFrom(deps.store.env.asRecord(app.id)).length > 0;
  return scaleView(
    app,
    deps.defaultDiskBudget,
    deps.store.scalingDecisions.latest(app.id, DECISIONS_SHOWN),
    hasWorkers,
    deps.services?.runtime.workerInstancesOf(app.id) ?? [],
  );
}

/** Decisions `slipway scale` shows. */
const DECISIONS_SHOWN = 5;

/** Where the daemon may not resize a mounted filesystem (no CAP_SYS_RESOURCE), a larger budget waits for the next mount. */
const DISK_AT_NEXT_MOUNT =
  "The new disk budget is recorded; this machine does not let the daemon grow a mounted filesystem, so the app's filesystem grows to it at its next mount (after `slipway system stop` and a start of the daemon).";

/** What `PUT /v1/apps/:app/scale` accepts; a misspelt field is refused rather than ignored. */
const SCALE_FIELDS = [
  'flavor',
  'buildFlavor',
  'instances',
  'disk',
  'minInstances',
  'maxInstances',
  'minFlavor',
  'maxFlavor',
  'autoscaling',
  'workers',
  'minWorkers',
  'maxWorkers',
];

/** When a range of workers is set or dropped on an app that runs: the web instances change only at their next start. */
const WORKERS_MOVE_AT_RESTART =
  'The workers move at the next deployment or `slipway restart`: until then they run where they ran (beside each instance, or in the worker instances).';

/**
 * Scaling: the instance count applies at once to the running release; a flavour applies at
 * the next deployment or restart (the instances running keep their sandbox).
 */
export function instanceHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(instanceRoutes.getScale, ({ user, deps, params }) => {
    const app = appForUser(deps.store, user, params.app);
    return { scale: scaleViewOf(deps, app) };
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
    const buildFlavor = body.buildFlavor === undefined ? undefined : flavorNamed(body.buildFlavor).name;
    const disk = body.disk === undefined ? undefined : parseDiskBudget(String(body.disk));
    const autoscaling =
      body.autoscaling === undefined
        ? undefined
        : parseAutoscalingOverrides(String(body.autoscaling), storedOverrides(app.autoscaling_json));
    const scaling = scalingChange(app, body);
    const workers = workerRangeChange(app, body);
    let note: string | undefined;
    if (scaling === undefined && buildFlavor === undefined && disk === undefined && autoscaling === undefined && workers === undefined) {
      throw new ValidationError('Nothing to change.', `Give ${SCALE_FIELDS.join(', ')}.`);
    }
    if (scaling || workers) {
      // Worker instances mount the app's volumes as its web instances do.
      const maxWeb = scaling?.ranges.maxInstances ?? rangesOf(app).maxInstances;
      const maxWorkers = workers ? (workers.range?.max ?? 0) : (workerRangeOf(app)?.max ?? 0);
      refuseScaleOverExclusive(ctx.deps.store, app, maxWeb + maxWorkers);
      // Quotas count the maxima: they are what the autoscaler may reach without asking.
      const before = rangesOf(app);
      quotasOf(ctx.deps).checkScale(orgOfApp(ctx.deps, app), app, {
        ...(scaling && scaling.ranges.maxInstances !== before.maxInstances ? { instances: scaling.ranges.maxInstances } : {}),
        ...(scaling && scaling.ranges.maxFlavor !== before.maxFlavor ? { flavor: scaling.ranges.maxFlavor } : {}),
        ...(workers ? { workers: workers.range?.max ?? null } : {}),
      });
    }
    if (disk !== undefined) {
      // The budget bounds what a tenant may take of the machine's disk: the operator's call.
      requireAdmin(ctx.user);
      const applies = (await ctx.deps.services?.disks?.setBudget(app.id, disk)) ?? 'now';
      ctx.deps.store.apps.setDiskBudget(app.id, disk);
      if (applies !== 'now') note = DISK_AT_NEXT_MOUNT;
    }
    ctx.deps.store.apps.setFlavors(app.id, { buildFlavor });
    if (autoscaling !== undefined) {
      ctx.deps.store.apps.setAutoscaling(app.id, Object.keys(autoscaling).length > 0 ? JSON.stringify(autoscaling) : null);
    }
    if (scaling) {
      const { minInstances } = scaling.ranges;
      ctx.deps.store.apps.setScaling(app.id, { ...scaling.ranges, minInstances: Math.max(1, minInstances) }, scaling.current);
      ctx.deps.store.apps.setScaleToZero(app.id, minInstances === 0);
      const runtime = ctx.deps.services?.runtime;
      if (runtime && scaling.current.instances !== (app.instances ?? 1)) {
        await scaleSaying(runtime, app, (line) => ctx.deps.services?.logs.append(app.id, 'system', line));
      }
    }
    if (workers) {
      const wasApart = workerRangeOf(app) !== undefined;
      ctx.deps.store.apps.setWorkerRange(app.id, workers.range);
      const runs = ctx.deps.store.deployments.release(app.id)?.wanted === 'running';
      const runtime = ctx.deps.services?.runtime;
      if (wasApart !== (workers.range !== null)) {
        if (runs) note = note ? `${note}\n${WORKERS_MOVE_AT_RESTART}` : WORKERS_MOVE_AT_RESTART;
      } else if (runtime && workers.range && workers.range.count !== workerRangeOf(app)?.count) {
        await scaleWorkersSaying(runtime, app, (line) => ctx.deps.services?.logs.append(app.id, 'system', line));
      }
    }
    return { scale: scaleViewOf(ctx.deps, ctx.deps.store.apps.byId(app.id)!), ...(note ? { note } : {}) };
  });

  router.handle(instanceRoutes.setInstances, async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const count = checkInstanceCount(ctx.body.count);
    const runtime = ctx.deps.services?.runtime;
    if (!runtime) throw new SlipwayError(503, 'unavailable', 'Instances are not available on this daemon.');
    refuseScaleOverExclusive(ctx.deps.store, app, count);
    quotasOf(ctx.deps).checkScale(orgOfApp(ctx.deps, app), app, { instances: count });
    // A count given is a fixed one: the range closes on it.
    const ranges = rangesOf(app);
    ctx.deps.store.apps.setScaling(
      app.id,
      { minInstances: count, maxInstances: count, minFlavor: ranges.minFlavor, maxFlavor: ranges.maxFlavor },
      { instances: count, flavor: ranges.flavor },
    );
    await scaleSaying(runtime, app, (line) => ctx.deps.services?.logs.append(app.id, 'system', line));
    return { instances: count, running: runtime.instancesOf(app.id).length };
  });
}

/** As scaleSaying, for the app's worker instances. */
async function scaleWorkersSaying(runtime: AppRuntime, app: AppRow, log: (line: string) => void): Promise<void> {
  try {
    await runtime.scaleWorkers(app, log);
  } catch (error) {
    if (error instanceof SlipwayError) throw error;
    throw new SlipwayError(
      502,
      'instance_start_failed',
      `The new count is kept, but a worker instance could not start: ${(error as Error).message}`,
      'The worker instances running go on. See `slipway logs` for its output, then scale again to start what is missing.',
    );
  }
}

/**
 * Scales the running release to the stored count. A new instance that cannot start is the app's
 * or the machine's matter, not the daemon's: the user learns that the count is kept, what went
 * wrong and that the instances running keep serving.
 */
async function scaleSaying(runtime: AppRuntime, app: AppRow, log: (line: string) => void): Promise<void> {
  try {
    await runtime.scaling.scale(app, log);
  } catch (error) {
    if (error instanceof SlipwayError) throw error;
    throw new SlipwayError(
      502,
      'instance_start_failed',
      `The new count is kept, but an instance could not start: ${(error as Error).message}`,
      'The running instances keep serving. See `slipway logs` for its output, then scale again to start what is missing.',
    );
  }
}
