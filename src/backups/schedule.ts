import { ValidationError } from '../core/errors.js';
import type { BackupSchedule } from '../store/addon-backups.js';
import type { Store } from '../store/store.js';

export interface ScheduleDefaults {
  /** HH:MM in the machine's local time (the daemon's --backup-at). */
  at: string;
  keepDays: number;
}

export const DEFAULT_SCHEDULE: ScheduleDefaults = { at: '03:00', keepDays: 7 };

const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$/;

export function checkTimeOfDay(at: string, what = 'The backup time'): string {
  if (!HH_MM.test(at)) throw new ValidationError(`${what} ${JSON.stringify(at)} is not a time of day such as 03:30 (HH:MM, 24-hour).`);
  return at;
}

/**
 * The longest an add-on's backups are kept (docs/behaviour.md, Add-on backups): each backup
 * holds a copy of the tenant's data on the platform's backup store, so what one tenant keeps
 * is bounded in time as its manual backups are in number (the backups quota).
 */
export const MAX_KEEP_DAYS = 90;

export function checkKeepDays(days: number): number {
  if (!Number.isInteger(days) || days < 1 || days > MAX_KEEP_DAYS) {
    throw new ValidationError(
      `Backups are kept between 1 and ${MAX_KEEP_DAYS} days; ${days} is not a whole number in that range.`,
      'Keep what must outlive that elsewhere: `slipway addon backup download` gives a portable dump.',
    );
  }
  return days;
}

/** When today's scheduled backup falls: HH:MM of `now`'s day, local time. */
export function scheduledToday(at: string, now: Date): Date {
  const [, hours, minutes] = HH_MM.exec(at) ?? [];
  const day = new Date(now);
  day.setHours(Number(hours), Number(minutes), 0, 0);
  return day;
}

/** Each add-on's time of day and kept days: its own when set, the platform's otherwise. */
export class BackupSchedules {
  constructor(
    private readonly store: Store,
    private readonly defaults: ScheduleDefaults,
  ) {
    checkTimeOfDay(defaults.at, 'The platform backup time');
    checkKeepDays(defaults.keepDays);
  }

  of(addonId: string): BackupSchedule {
    const own = this.store.addonBackups.schedule(addonId);
    // A schedule set before the bound existed keeps at most the bound.
    if (own) return { ...own, keep_days: Math.min(own.keep_days, MAX_KEEP_DAYS) };
    return { addon_id: addonId, at: this.defaults.at, keep_days: this.defaults.keepDays };
  }

  set(addonId: string, change: { at?: string; keepDays?: number }): BackupSchedule {
    const current = this.of(addonId);
    const next: BackupSchedule = {
      addon_id: addonId,
      at: change.at === undefined ? current.at : checkTimeOfDay(change.at),
      keep_days: change.keepDays === undefined ? current.keep_days : checkKeepDays(change.keepDays),
    };
    this.store.addonBackups.setSchedule(next);
    return next;
  }

  /** Today's time has come and no scheduled backup was taken since. */
  due(addonId: string, now: Date): boolean {
    const slot = scheduledToday(this.of(addonId).at, now);
    if (now < slot) return false;
    return !this.store.addonBackups.listForAddon(addonId).some((b) => b.kind === 'scheduled' && new Date(b.created_at) >= slot);
  }
}
