import type { AppRow } from '../store/apps.js';
import type { Store } from '../store/store.js';
import { AppUserRemovalError, type AppUsers } from '../sandbox/app-users.js';
import type { Deployer } from '../pipeline/deployer.js';
import { ConflictError, SlipwayError } from '../core/errors.js';
import type { Lifecycle } from './lifecycle.js';

export interface AppDeletionDeps {
  store: Store;
  deployer: Deployer;
  appUsers: AppUsers;
  /** Where the rooms that own something of an app subscribe: each ends and removes its own. */
  lifecycle: Lifecycle;
  /** The daemon's own log. */
  log(line: string): void;
}

/**
 * Deletes an application: its instances stop, its domain leaves the router, its repository,
 * releases, caches, logs and unix user go, its links (to add-ons and apps) and variables go with its
 * record; add-ons themselves stay. Refused while a deployment of it runs.
 *
 * The story in order; what each room does is its own subscription on the lifecycle hub
 * (src/daemon/README.md lists them): "app ending" (what runs of it ends), its user removed,
 * "app removing" (its files, repository and logs), its record removed, "app deleted" (its
 * routes, traffic records, drains and images). Each step is told to every room and finishes
 * when all of them did; a failure is thrown once all were told, and stops the deletion there.
 */
export async function deleteApp(deps: AppDeletionDeps, app: AppRow): Promise<void> {
  if (deps.deployer.busy(app.id)) {
    throw new ConflictError(
      `A deployment of ${app.name} is running or queued.`,
      'Wait until it ends (`slipway activity`), then delete the application again.',
    );
  }
  await endEverything(deps, app);
  // The deployments' records go with the app's: their logs are found while they still exist.
  const deploymentIds = deps.store.deployments.listForApp(app.id, 1_000_000).map((d) => d.id);
  await deps.lifecycle.tell('app removing', { appId: app.id, deploymentIds });
  deps.store.apps.remove(app.id);
  await deps.lifecycle.tell('app deleted', { appId: app.id });
}

/**
 * Ends every process of the app ("app ending": its drains first, so nothing more is sent, then
 * its instances with their workers and the old ones still draining, its cron runs and one-off
 * commands), then removes its unix user once no process runs as it. When that fails, the app
 * stays ("app kept": whatever else of it ran starts again) and the error says so; the daemon's
 * log says why (docs/security.md, "Deletion ends everything").
 */
async function endEverything(deps: AppDeletionDeps, app: AppRow): Promise<void> {
  try {
    await deps.lifecycle.tell('app ending', { appId: app.id });
    await deps.appUsers.remove(app.id);
  } catch (error) {
    await deps.lifecycle
      .tell('app kept', { appId: app.id })
      .catch((e: Error) => deps.log(`Taking ${app.name} (${app.id}) up again: ${e.message}`));
    if (!(error instanceof AppUserRemovalError)) throw error;
    deps.log(
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
