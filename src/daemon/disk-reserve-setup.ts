import { DEFAULT_MIN_FREE_DISK, DiskReserve, type ReservedFolder } from '../core/disk-reserve.js';
import { backupStoreOptions } from './backups-setup.js';
import type { DaemonOptions } from './options.js';

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
