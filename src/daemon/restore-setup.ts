import type { AddonBackups } from '../backups/addon-backups.js';
import {
  assertEmptyDataFolder,
  type CheckedBackup,
  checkPlatformBackup,
  type RestoredPlatform,
  restorePlatform,
} from '../backups/platform/platform-restore.js';
import type { Deployer } from '../pipeline/deployer.js';
import type { Store } from '../store/store.js';
import { backupStoreOptions } from './backups-setup.js';
import type { DaemonOptions } from './options.js';

/**
 * `slipway server --restore-from`, in the three moments of a start it belongs to. Apart from the
 * daemon's wiring because each moment has its own promise to keep about the data folder.
 */

/**
 * Before anything is created in the data folder: the folder must be empty and the backup whole,
 * so a refusal leaves the folder as it was. Undefined when no restore was asked for.
 */
export async function checkRestoreSource(options: DaemonOptions): Promise<CheckedBackup | undefined> {
  if (!options.restoreFrom) return undefined;
  await assertEmptyDataFolder(options.dataDir);
  return checkPlatformBackup(options.restoreFrom, options.backups?.keyFile).catch((error: Error) => {
    throw new Error(`Cannot restore from ${options.restoreFrom}: ${error.message} Nothing was written to ${options.dataDir}.`);
  });
}

/** Writes the backup into the data folder, before the store is opened; a failure says what is left. */
export async function restoreDataFolder(
  options: DaemonOptions,
  backup: CheckedBackup,
  log: (line: string) => void,
): Promise<RestoredPlatform> {
  try {
    return await restorePlatform({
      backup,
      dataDir: options.dataDir,
      backupStore: backupStoreOptions(options.dataDir, options.backups),
      log,
    });
  } catch (error) {
    throw new Error(
      `The restore from ${options.restoreFrom} stopped: ${(error as Error).message} ` +
        `The data folder ${options.dataDir} holds part of it: empty it before trying again.`,
    );
  }
}

/**
 * Once everything runs: each app that served is built again from the commit it served (releases
 * are build output, not in the backup), and each Redis add-on loads its snapshot through the
 * add-on restore now that its server runs.
 */
export function resumeAfterRestore(
  restored: RestoredPlatform,
  deps: { store: Store; deployer: Deployer; backups: AddonBackups; log(line: string): void },
): void {
  const { store, deployer, backups, log } = deps;
  for (const { appId, commit } of restored.rebuild) {
    const app = store.apps.byId(appId);
    if (!app) continue;
    const deployment = deployer.enqueue(app, { commit, cause: 'platform restore', userId: null, mode: 'build' });
    log(`Restore: ${app.name} (${app.id}) is built again from commit ${commit.slice(0, 12)} (deployment ${deployment.id}).`);
  }
  for (const { addonId, backupId } of restored.redis) {
    const addon = store.addons.byId(addonId);
    if (!addon) continue;
    void backups
      .restore(addon, { backupId })
      .then(() => log(`Restore: the Redis add-on ${addon.name} loaded its backup ${backupId}.`))
      .catch((error: Error) => log(`Restore: the Redis add-on ${addon.name} could not load its backup ${backupId}: ${error.message}`));
  }
}
