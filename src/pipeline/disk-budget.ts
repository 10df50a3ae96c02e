import { PhaseError } from '../core/phase-error.js';
import { budgetExceededMessage, budgetExhausted, SCALE_DISK_HINT, spaceIsShort } from '../core/disk-size.js';
import { humanSize } from '../shared/human-size.js';
import type { Store } from '../store/store.js';
import type { AppDisks } from '../storage/app-disks.js';
import type { DeployLayout } from '../storage/deploy-layout.js';
import { pruneReleases } from './release-retention.js';

/**
 * Before a build: the app's filesystem is mounted (an app made since the daemon started has
 * none yet), and when less than a quarter of the budget is free, kept releases other than the
 * serving one are removed first, so the build has the room they took.
 */
export async function makeRoomBeforeBuild(o: {
  disks: AppDisks | undefined;
  store: Store;
  layout: DeployLayout;
  appId: string;
  log(line: string): void;
}): Promise<void> {
  if (!o.disks) return;
  await o.disks.ensure(o.appId);
  const use = await o.disks.use(o.appId);
  if (!use || !spaceIsShort(use)) return;
  await pruneReleases(o.store, o.layout, o.appId, 1);
  const after = await o.disks.use(o.appId);
  o.log(
    `==> Only ${humanSize(use.freeBytes)} of the disk budget of ${humanSize(use.budgetBytes)} was free: kept releases other than the serving one were removed (${humanSize(after?.freeBytes ?? use.freeBytes)} free now).`,
  );
}

/**
 * After a failed receive or build, before its build folder is removed: when the app's
 * filesystem is full, the failure is the budget's (whatever the tool said about ENOSPC), with
 * what to do. Null otherwise: the failure keeps its own message.
 */
export async function budgetFailure(
  disks: AppDisks | undefined,
  appId: string,
  phase: 'receive' | 'build' | 'release',
): Promise<PhaseError | null> {
  if (!disks) return null;
  const use = await disks.use(appId).catch(() => null);
  if (!use || !budgetExhausted(use)) return null;
  return new PhaseError(phase, budgetExceededMessage(use), SCALE_DISK_HINT);
}
