import { rm } from 'node:fs/promises';
import type { Store } from '../store/store.js';
import type { AppRow } from '../store/apps.js';
import type { RepoStore } from '../receiver/repo-store.js';
import type { AppUsers } from '../sandbox/app-users.js';
import type { AppRuntime } from '../serving/app-runtime.js';
import type { Deployer } from './deployer.js';
import type { LogHub } from '../logs/log-hub.js';
import { ConflictError } from '../core/errors.js';
import { DeployLayout } from './deploy-layout.js';
import type { AppDisks } from './app-disks.js';

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
}

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
  await deps.runtime.stop(app.id);
  // Every folder below is of the platform's layout, named by the app id: the user goes first so
  // nothing of the app can run while they are removed.
  await deps.appUsers.remove(app.id);
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
