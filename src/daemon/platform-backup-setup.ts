import { isAbsolute } from 'node:path';
import { completeBackupNames, type PlatformBackupPlace, STORE_PREFIX } from '../backups/platform/backup-place.js';
import { platformBackupDue } from '../backups/platform/manifest.js';
import type { PlatformBackupReport } from '../backups/platform/platform-backup.js';
import { scheduledToday } from '../backups/schedule.js';
import type { BackupStore } from '../backups/store/backup-store.js';
import { FolderBackupStore } from '../backups/store/folder-store.js';

/** `--platform-backup-to store`, and `system backup` without `--to`: the configured backup store. */
export const STORE_TARGET = 'store';

/**
 * Where a platform backup goes: a folder of the daemon's machine (`--to <folder>`), or, when
 * none is given, the backup store the add-ons' backups go to (its folder or S3 bucket), under
 * `platform/`. `raw` is that store as it keeps bytes: each backup seals its own files.
 */
export function platformBackupPlaces(raw: BackupStore, storeFolder: string | undefined): (to?: string) => Promise<PlatformBackupPlace> {
  return async (to) => {
    if (to === undefined || to === STORE_TARGET) {
      return {
        raw,
        prefix: STORE_PREFIX,
        folder: storeFolder && `${storeFolder}/${STORE_PREFIX.slice(0, -1)}`,
        describe: () => raw.describe(),
      };
    }
    if (!isAbsolute(to)) throw new Error(`The backup folder must be an absolute path on the daemon's machine, not ${JSON.stringify(to)}.`);
    const folder = await FolderBackupStore.open(to);
    return { raw: folder, prefix: '', folder: to, describe: () => folder.describe() };
  };
}

export interface PlatformBackupSchedule {
  /** The folder the backups go to, or `store` for the configured backup store (`--platform-backup-to`). */
  to: string;
  /** HH:MM, local time (`--platform-backup-at`, default 02:30). */
  at: string;
  /** Complete backups kept there (`--platform-backup-keep`, default 7). */
  keep: number;
}

export const DEFAULT_PLATFORM_BACKUP_AT = '02:30';
export const DEFAULT_PLATFORM_BACKUP_KEEP = 7;

/** How often the schedule is looked at: a backup starts within a minute of its time. */
const TICK_MS = 60_000;

/**
 * The daily whole-platform backup: from `begin()` (once the add-on servers run) and then once a
 * minute, when today's time has come and the place holds no backup made since, one is written
 * and the oldest beyond `keep` go. So a daemon started after today's time, or down at that time,
 * takes the day's backup at its start. A failure is logged and waits for the next day's time
 * (a backup can be taken by hand meanwhile).
 */
export function schedulePlatformBackups(
  schedule: PlatformBackupSchedule,
  placeOf: (to: string) => Promise<PlatformBackupPlace>,
  take: (to: string, keep: number) => Promise<PlatformBackupReport>,
  log: (line: string) => void,
): { begin(): void; stop(): void } {
  let lastTry: Date | undefined;
  let running = false;
  const tick = async () => {
    if (running) return;
    const now = new Date();
    const slot = scheduledToday(schedule.at, now);
    const entries = await placeOf(schedule.to)
      .then(completeBackupNames)
      .catch(() => [] as string[]);
    if (!platformBackupDue(entries, slot, now, lastTry)) return;
    running = true;
    lastTry = now;
    try {
      const report = await take(schedule.to, schedule.keep);
      log(`Scheduled platform backup written to ${report.path}${report.removed.length ? `; removed ${report.removed.join(', ')}` : ''}.`);
    } catch (error) {
      log(
        `The scheduled platform backup to ${schedule.to === STORE_TARGET ? 'the backup store' : schedule.to} FAILED: ${(error as Error).message}`,
      );
    } finally {
      running = false;
    }
  };
  let timer: NodeJS.Timeout | undefined;
  return {
    begin() {
      void tick();
      timer = setInterval(() => void tick(), TICK_MS);
      timer.unref();
    },
    stop: () => clearInterval(timer),
  };
}

/**
 * One platform backup at a time (by hand or scheduled): each clears the temporary folders a
 * crashed one left, which must not be another's in progress.
 */
export function oneBackupAtATime(
  take: (to: string | undefined, keep?: number) => Promise<PlatformBackupReport>,
): (to: string | undefined, keep?: number) => Promise<PlatformBackupReport> {
  let running: Promise<unknown> = Promise.resolve();
  return (to, keep) => {
    const next = running.then(() => take(to, keep));
    running = next.catch(() => undefined);
    return next;
  };
}
