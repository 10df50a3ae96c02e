import { ConflictError } from '../../core/errors.js';
import { rangesOf, workerRangeOf } from '../../core/scaling-ranges.js';
import type { AddonRow } from '../../store/addons.js';
import type { AppRow } from '../../store/apps.js';
import type { Store } from '../../store/store.js';
import { FS_BUCKET } from './fs-bucket-provider.js';

/**
 * Exclusive volumes (README.md beside this file): an FS bucket whose config says `exclusive`,
 * for a store that must have one writer (SQLite). One app links it, and that app runs one
 * instance; a deploy hands the volume over (src/serving/exclusive-handover.ts). These are the
 * refusals that keep it so, each with the reason.
 */
export function isExclusive(config: Readonly<Record<string, string>>): boolean {
  return config.exclusive === 'true';
}

/** The exclusive volumes linked to the app (an app with one hands it over at each switch). */
export function exclusiveVolumesOf(store: Store, appId: string): AddonRow[] {
  return store.links.addonsOf(appId).filter((row) => row.provider === FS_BUCKET && isExclusive(store.addons.config(row)));
}

/** Refuses a scale that would let the app run more than one instance while it has an exclusive volume. */
export function refuseScaleOverExclusive(store: Store, app: Pick<AppRow, 'id' | 'name'>, maxInstances: number): void {
  if (maxInstances <= 1) return;
  const volume = exclusiveVolumesOf(store, app.id)[0];
  if (!volume) return;
  throw new ConflictError(
    `The application ${app.name} mounts the exclusive volume ${volume.name}, which one instance at a time may mount: it cannot run ${maxInstances} instances.`,
    `Keep one instance (a deploy hands the volume over without failing a request), or use a shared FS bucket (\`slipway addon create fs-bucket <name>\`) and unlink ${volume.name}.`,
  );
}

/**
 * Refuses linking an exclusive volume to a second app, or to an app that may run more than one
 * instance (its count or the autoscaler's maximum).
 */
export function refuseExclusiveLink(store: Store, addon: AddonRow, app: AppRow): void {
  if (addon.provider !== FS_BUCKET || !isExclusive(store.addons.config(addon))) return;
  const others = store.links.appsOfAddon(addon.id).filter((id) => id !== app.id);
  if (others.length > 0) {
    const other = store.apps.byId(others[0]!)?.name ?? others[0]!;
    throw new ConflictError(
      `The exclusive volume ${addon.name} is linked to ${other} already; one application at a time may mount it.`,
      `Unlink it from ${other} first (\`slipway service unlink-addon ${addon.name} --app ${other}\`), or share files through a non-exclusive FS bucket.`,
    );
  }
  refuseExclusiveCreation(addon.name, [app]);
}

/** At creation, before anything exists: the apps `--link` names for an exclusive volume, checked as a link would be. */
export function refuseExclusiveCreation(name: string, apps: readonly AppRow[]): void {
  if (apps.length > 1) {
    throw new ConflictError(
      `An exclusive volume is mounted by one application at a time; ${apps.length} were given to link to ${name}.`,
      'Link one application (`--link <app>` once), or leave --exclusive out for a bucket several apps share.',
    );
  }
  for (const app of apps) {
    const { instances, maxInstances } = rangesOf(app);
    // Worker instances of a range of workers mount the app's volumes too.
    const most = Math.max(instances, maxInstances) + (workerRangeOf(app)?.max ?? 0);
    if (most > 1) {
      throw new ConflictError(
        `The application ${app.name} may run ${most} instances; the exclusive volume ${name} is mounted by one instance at a time.`,
        workerRangeOf(app)
          ? `Scale it to one instance with its workers beside it first (\`slipway scale --instances 1 --workers default --app ${app.name}\`), then link the volume.`
          : `Scale it to one first (\`slipway scale --instances 1 --app ${app.name}\`), then link the volume.`,
      );
    }
  }
}
