import { readdir } from 'node:fs/promises';
import { platformBackupDue } from '../backups/platform/manifest.js';
import type { PlatformBackupReport } from '../backups/platform/platform-backup.js';
import { scheduledToday } from '../backups/schedule.js';

export interface PlatformBackupSchedule {
  /** The folder the backups go to (`--platform-backup-to`). */
  to: string;
  /** HH:MM, local time (`--platform-backup-at`, default 02:30). */
  at: string;
  /** Complete backups kept in the folder (`--platform-backup-keep`, default 7). */
  keep: number;
}

export const DEFAULT_PLATFORM_BACKUP_AT = '02:30';
export const DEFAULT_PLATFORM_BACKUP_KEEP = 7;

/** How often the schedule is looked at: a backup starts within a minute of its time. */
const TICK_MS = 60_000;

/**
 * The daily whole-platform backup: from `begin()` (once the add-on servers run) and then once a
 * minute, when today's time has come and the folder holds no backup made since, one is written
 * and the oldest beyond `keep` go. So a daemon started after today's time, or down at that time,
 * takes the day's backup at its start. A failure is logged and waits for the next day's time
 * (a backup can be taken by hand meanwhile).
 */
export function schedulePlatformBackups(
  schedule: PlatformBackupSchedule,
  take: (to: string, keep: number) => Promise<PlatformBackupReport>,
  log: (line: string) => void,
): { begin(): void; stop(): void } {
  let lastTry: Date | undefined;
  let running = false;
  const tick = async () => {
    if (running) return;
    const now = new Date();
    const slot = scheduledToday(schedule.at, now);
    const entries = await readdir(schedule.to).catch(() => [] as string[]);
    if (!platformBackupDue(entries, slot, now, lastTry)) return;
    running = true;
    lastTry = now;
    try {
      const report = await take(schedule.to, schedule.keep);
      log(`Scheduled platform backup written to ${report.path}${report.removed.length ? `; removed ${report.removed.join(', ')}` : ''}.`);
    } catch (error) {
      log(`The scheduled platform backup to ${schedule.to} FAILED: ${(error as Error).message}`);
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
  take: (to: string, keep?: number) => Promise<PlatformBackupReport>,
): (to: string, keep?: number) => Promise<PlatformBackupReport> {
  let running: Promise<unknown> = Promise.resolve();
  return (to, keep) => {
    const next = running.then(() => take(to, keep));
    running = next.catch(() => undefined);
    return next;
  };
}
