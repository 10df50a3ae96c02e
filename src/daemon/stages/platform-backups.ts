import { takePlatformBackup } from '../../backups/platform/platform-backup.js';
import { slipwayVersion } from '../../cli/version.js';
import type { DiskReserve } from '../../storage/disk-reserve.js';
import type { Store } from '../../store/store.js';
import { backupStoreOptions, type startBackups } from '../backups-setup.js';
import { openBackupStore } from '../../backups/store/open-store.js';
import type { EgressGuard } from '../../network/egress-guard.js';
import { keptReleaseFolders } from '../../pipeline/kept-release.js';
import { oneBackupAtATime, platformBackupPlaces, schedulePlatformBackups } from '../platform-backup-setup.js';
import type { DaemonBase } from './stage.js';

/**
 * The whole-platform backup: taken on demand (`slipway system backup`), one at a time, and
 * daily with `--platform-backup-to` (its schedule begun by the resume stage), to the backup
 * store or a folder. Needs: `store`, `backupService`, `reserve`, `egress`. Provides: `backupPlatform`, `scheduledPlatformBackups`.
 */
export async function platformBackups(
  needs: DaemonBase & { store: Store; backupService: Awaited<ReturnType<typeof startBackups>>; reserve: DiskReserve; egress: EgressGuard },
) {
  const { options, store, backupService, reserve, egress, stoppers, log } = needs;
  // The backup store as it keeps bytes: a platform backup there seals its own files.
  const rawBackupStore = await openBackupStore({ ...backupStoreOptions(options.dataDir, options.backups), keyFile: undefined, egress });
  stoppers.control('platform backup store', () => rawBackupStore.close?.());
  const platformPlace = platformBackupPlaces(rawBackupStore, backupStoreOptions(options.dataDir, options.backups).folder);
  const backupPlatform = oneBackupAtATime(async (to, keep) =>
    takePlatformBackup(
      {
        dataDir: options.dataDir,
        store,
        backups: backupService.backups,
        backupStore: backupService.backupStore,
        keptReleases: (appId) => keptReleaseFolders(store, appId),
        version: slipwayVersion(),
        log,
        reserve,
        keyFile: options.backups?.keyFile,
      },
      await platformPlace(to),
      keep,
    ),
  );
  const scheduledPlatformBackups =
    options.platformBackup && schedulePlatformBackups(options.platformBackup, platformPlace, backupPlatform, log);
  if (scheduledPlatformBackups) stoppers.control('platform backups', () => scheduledPlatformBackups.stop());
  return { backupPlatform, scheduledPlatformBackups };
}
