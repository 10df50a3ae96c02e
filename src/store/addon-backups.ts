import type { Db } from './database.js';

export type Verification = 'pending' | 'verified' | 'failed';
export type BackupKind = 'scheduled' | 'manual' | 'safety';

export interface AddonBackupRow {
  id: string;
  addon_id: string;
  kind: BackupKind;
  /** The object in the backup store: a PostgreSQL base backup (shared) or a Redis snapshot. */
  object_key: string;
  /** PostgreSQL: the named restore point the counts were taken at. */
  restore_point: string | null;
  created_at: string;
  /** When the backup was whole in the store: PostgreSQL restores to a time from there on. */
  finished_at: string;
  size_bytes: number;
  /** What the verification compares: rows per table (PostgreSQL), keys (Redis). */
  counts_json: string;
  verification: Verification;
  verification_detail: string;
  verified_at: string | null;
}

export interface BackupSchedule {
  addon_id: string;
  /** HH:MM, the machine's local time. */
  at: string;
  keep_days: number;
}

/** A backup of an add-on since deleted: its object waits out the grace period, then goes. */
export interface DeletedAddonBackup {
  backup_id: string;
  addon_id: string;
  object_key: string;
  deleted_at: string;
}

export class AddonBackupRepository {
  constructor(private readonly db: Db) {}

  insert(row: Omit<AddonBackupRow, 'verification' | 'verification_detail' | 'verified_at'>): AddonBackupRow {
    const full: AddonBackupRow = { ...row, verification: 'pending', verification_detail: '', verified_at: null };
    this.db
      .prepare(
        `INSERT INTO addon_backups (id, addon_id, kind, object_key, restore_point, created_at, finished_at, size_bytes, counts_json,
           verification, verification_detail, verified_at)
         VALUES (@id, @addon_id, @kind, @object_key, @restore_point, @created_at, @finished_at, @size_bytes, @counts_json,
           @verification, @verification_detail, @verified_at)`,
      )
      .run(full);
    return full;
  }

  byId(id: string): AddonBackupRow | undefined {
    return this.db.prepare('SELECT * FROM addon_backups WHERE id = ?').get(id) as AddonBackupRow | undefined;
  }

  /** Failed verifications first (they need someone's eyes), then newest first. */
  listForAddon(addonId: string): AddonBackupRow[] {
    return this.db
      .prepare(
        `SELECT * FROM addon_backups WHERE addon_id = ?
         ORDER BY CASE verification WHEN 'failed' THEN 0 ELSE 1 END, created_at DESC, id DESC`,
      )
      .all(addonId) as AddonBackupRow[];
  }

  all(): AddonBackupRow[] {
    return this.db.prepare('SELECT * FROM addon_backups ORDER BY created_at').all() as AddonBackupRow[];
  }

  pending(): AddonBackupRow[] {
    return this.db.prepare(`SELECT * FROM addon_backups WHERE verification = 'pending' ORDER BY created_at`).all() as AddonBackupRow[];
  }

  setVerification(id: string, verification: Exclude<Verification, 'pending'>, detail: string, at: Date): void {
    this.db
      .prepare('UPDATE addon_backups SET verification = ?, verification_detail = ?, verified_at = ? WHERE id = ?')
      .run(verification, detail, at.toISOString(), id);
  }

  delete(id: string): void {
    this.db.prepare('DELETE FROM addon_backups WHERE id = ?').run(id);
  }

  /** How many backup rows still rest on an object (a shared PostgreSQL base backup). */
  usersOfObject(objectKey: string): number {
    return (this.db.prepare('SELECT count(*) AS n FROM addon_backups WHERE object_key = ?').get(objectKey) as { n: number }).n;
  }

  /** Manual backups kept now over every add-on of an organisation (its backups quota). */
  manualOfOrg(orgId: string): number {
    return (
      this.db
        .prepare(`SELECT count(*) AS n FROM addon_backups b JOIN addons a ON a.id = b.addon_id WHERE a.org_id = ? AND b.kind = 'manual'`)
        .get(orgId) as { n: number }
    ).n;
  }

  /** The backups of deleted add-ons (recorded by a trigger as the add-on went) deleted before `before`. */
  deletedBefore(before: Date): DeletedAddonBackup[] {
    return this.db
      .prepare('SELECT * FROM deleted_addon_backups WHERE deleted_at < ? ORDER BY deleted_at')
      .all(before.toISOString()) as DeletedAddonBackup[];
  }

  /** The objects of deleted add-ons still in their grace period: nothing may prune what they rest on yet. */
  deletedObjectKeys(): string[] {
    return (this.db.prepare('SELECT DISTINCT object_key FROM deleted_addon_backups').all() as Array<{ object_key: string }>).map(
      (r) => r.object_key,
    );
  }

  /** How many deleted add-ons' backups, other than `backupId`, still rest on an object. */
  deletedUsersOfObject(objectKey: string, backupId: string): number {
    return (
      this.db
        .prepare('SELECT count(*) AS n FROM deleted_addon_backups WHERE object_key = ? AND backup_id != ?')
        .get(objectKey, backupId) as { n: number }
    ).n;
  }

  forgetDeleted(backupId: string): void {
    this.db.prepare('DELETE FROM deleted_addon_backups WHERE backup_id = ?').run(backupId);
  }

  schedule(addonId: string): BackupSchedule | undefined {
    return this.db.prepare('SELECT * FROM addon_backup_schedules WHERE addon_id = ?').get(addonId) as BackupSchedule | undefined;
  }

  setSchedule(schedule: BackupSchedule): void {
    this.db
      .prepare(
        `INSERT INTO addon_backup_schedules (addon_id, at, keep_days) VALUES (@addon_id, @at, @keep_days)
         ON CONFLICT (addon_id) DO UPDATE SET at = excluded.at, keep_days = excluded.keep_days`,
      )
      .run(schedule);
  }
}
