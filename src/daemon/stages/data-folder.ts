import { DEFAULT_MIN_FREE_DISK, DiskReserve, type ReservedFolder } from '../../storage/disk-reserve.js';
import { backupStoreOptions } from '../backups-setup.js';
import type { DaemonOptions } from '../options.js';
import type { RestoredPlatform } from '../../backups/platform/platform-restore.js';
import { acquireDaemonLock, ensureDataDir } from '../data-dir.js';
import { lockDownDataFolder } from '../data-folder-modes.js';
import { checkRestoreSource, restoreDataFolder } from '../restore-setup.js';
import { acquireSubnetLock } from '../subnet-lock.js';
import type { DaemonBase } from './stage.js';

/**
 * The reserve builds and backups leave (`--min-free-disk`): on the data folder's disk, and on
 * the backup folder's when backups go to a local folder (an S3 bucket is not this host's disk).
 */
export function diskReserveOf(options: Pick<DaemonOptions, 'dataDir' | 'minFreeDisk' | 'backups'>): DiskReserve {
  const folders: ReservedFolder[] = [{ label: "data folder's disk", path: options.dataDir }];
  const backupFolder = backupStoreOptions(options.dataDir, options.backups).folder;
  if (backupFolder) folders.push({ label: 'backup folder', path: backupFolder });
  return new DiskReserve(options.minFreeDisk ?? DEFAULT_MIN_FREE_DISK, folders);
}

/** Set as soon as each is mounted (by the sandboxes stage), so that a start failing after it still unmounts it. */
export interface Unmounts {
  appDisks(): Promise<void>;
  buildSecrets(): Promise<void>;
}

/**
 * The data folder, this daemon's alone: made (root's, 0700), locked against a second daemon on
 * it and on its subnet, and laid out from a platform backup first with `--restore-from`.
 * Needs: the base. Provides: `restored` (what the restore brought, to resume at the end),
 * `unmounts` (filled by the sandboxes stage), `reserve` (the free space builds and backups leave).
 */
export async function dataFolder({ options, log, stoppers }: DaemonBase): Promise<{
  restored: RestoredPlatform | undefined;
  unmounts: Unmounts;
  reserve: DiskReserve;
}> {
  // Checked before anything is created in the data folder: a refusal leaves it as it was.
  const backup = await checkRestoreSource(options);
  ensureDataDir(options.dataDir);
  const lock = acquireDaemonLock(options.dataDir);
  stoppers.control('lock', () => lock.release());
  // Before anything named after the subnet is touched (sandboxes swept, bridge, firewall table).
  const subnetLock = acquireSubnetLock(options.subnet, options.dataDir);
  stoppers.control('subnet', () => subnetLock.release());
  // Registered early so it runs late: the apps' filesystems are unmounted once nothing of them runs.
  const unmounts: Unmounts = { appDisks: async () => undefined, buildSecrets: async () => undefined };
  stoppers.dataPlane(
    'app filesystems',
    () => unmounts.appDisks(),
    () => undefined,
  );
  // Builds end with the daemon, whatever the scope: their credentials' tmpfs goes with them.
  stoppers.control('build credentials', () => unmounts.buildSecrets());
  lockDownDataFolder(options.dataDir);
  const restored = backup && (await restoreDataFolder(options, backup, log));
  return { restored, unmounts, reserve: diskReserveOf(options) };
}
