import { rm } from 'node:fs/promises';
import type { Store } from '../store/store.js';
import type { AppRow } from '../store/apps.js';
import type { RepoStore } from '../receiver/repo-store.js';
import { AppUserRemovalError, type AppUsers } from '../sandbox/app-users.js';
import type { AppRuntime } from '../serving/app-runtime.js';
import type { Deployer } from '../pipeline/deployer.js';
import type { LogHub } from '../logs/log-hub.js';
import { ConflictError, SlipwayError } from '../core/errors.js';
import { DeployLayout } from '../storage/deploy-layout.js';
import type { AppDisks } from '../storage/app-disks.js';

export interface AppRemovalDeps {
  store: Store;
  runtime: AppRuntime;
  deployer: Deployer;
  repos: RepoStore;
  appUsers: AppUsers;
  logs: LogHub;
  dataDir: string;
  /** The app's filesystem, unmounted and its image removed; absent in unit tests. */
  disks?: AppDisks;
  /** What else runs for the app and ends with it; absent in unit tests. */
  ending?: AppEnding;
  /** The daemon's own log. */
  log?(line: string): void;
}

/**
 * The app's work outside its instances, each ended (and kept from starting again) before its
 * user goes: `resume` when the deletion failed and the app stays.
 */
export interface AppEnding {
  /** Its log drains: nothing more is sent. */
  drains: { endApp(appId: string): Promise<void>; resume(appId: string): void };
  /** Its cron jobs: none starts, the runs going are killed. */
  cron: { endRunsOf(appId: string): Promise<void>; resume(appId: string): void };
  /** Its one-off commands (`slipway run`): none starts, the running ones are killed. */
  oneOffs: { endAll(appId: string): Promise<void>; reopen(appId: string): void };
}

/** An instance may take this long between SIGTERM and SIGKILL when its app is deleted: nothing of it is kept. */
const DELETION_GRACE_MS = 3000;

/**
 * Deletes an application: its instances stop, its domain leaves the router, its repository,
 * releases, caches, logs and unix user go, its links (to add-ons and apps) and variables go with its
 * record; add-ons themselves stay. Refused while a deployment of it runs.
 */
export async function removeApp(deps: AppRemovalDeps, app: AppRow): Promise<void> {
  if (deps.deployer.busy(app.id)) {
    throw new ConflictError(
      `A deployment of ${app.name} is running or queued.`,
      'Wait until it ends (`slipway activity`), then delete the application again.',
    );
  }
  await endEverything(deps, app);
  // Every folder below is of the platform's layout, named by the app id: the user goes first so
  // nothing of the app can run while they are removed.
  await deps.repos.remove(app.id);
  const layout = new DeployLayout(deps.dataDir);
  await rm(layout.releasesFolder(app.id), { recursive: true, force: true });
  await rm(layout.appCacheFolder(app.id), { recursive: true, force: true });
  // Releases from before per-app filesystems, then the filesystem itself.
  const legacy = layout.legacyFolders(app.id);
  for (const folder of [legacy.releases, legacy.cache, legacy.repository]) await rm(folder, { recursive: true, force: true });
  await deps.disks?.remove(app.id);
  // The deployments' records go with the app's: their logs are found while they still exist.
  await deps.logs.remove([app.id, ...deps.store.deployments.listForApp(app.id, 1_000_000).map((d) => d.id)]);
  deps.store.apps.remove(app.id);
  await deps.runtime.applyRoutes();
}

/**
 * Ends every process of the app (its drains first, so nothing more is sent, then its cron runs,
 * one-off commands, instances with their workers, and the old instances still draining), then
 * removes its unix user once no process runs as it. When that fails, the app stays (whatever
 * else of it ran starts again) and the error says so; the daemon's log says why.
 */
async function endEverything(deps: AppRemovalDeps, app: AppRow): Promise<void> {
  const { ending } = deps;
  try {
    await ending?.drains.endApp(app.id);
    await ending?.cron.endRunsOf(app.id);
    await ending?.oneOffs.endAll(app.id);
    await deps.runtime.end(app.id, DELETION_GRACE_MS);
    await deps.appUsers.remove(app.id);
  } catch (error) {
    ending?.drains.resume(app.id);
    ending?.cron.resume(app.id);
    ending?.oneOffs.reopen(app.id);
    if (!(error instanceof AppUserRemovalError)) throw error;
    deps.log?.(
      `Deleting ${app.name} (${app.id}) stopped: ${error.message}${error.output ? ` Output: ${error.output}` : ''} The application and its user stay; its instances start again with the next deployment or daemon start.`,
    );
    throw new SlipwayError(
      500,
      'deletion_failed',
      `${app.name} was not deleted: ${error.message}`,
      'The daemon’s log says more. Delete the application again; if it fails again, the operator removes what runs as that user.',
    );
  }
}
