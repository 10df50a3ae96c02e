import type { Db } from './database.js';

/** What an object of the backup store held when it was written: its size and SHA-256 (hex). */
export interface ObjectSum {
  size_bytes: number;
  sha256: string;
}

/**
 * The sums of the add-on backups' objects, by object key (migration 020): written once an object
 * is whole in the backup store, read before a verification or restore uses it, gone with it.
 */
export class BackupObjectSumRepository {
  constructor(private readonly db: Db) {}

  /** Records (or replaces, when the key was written again) the sum of an object just stored. */
  record(key: string, sum: ObjectSum, at = new Date()): void {
    this.db
      .prepare(
        `INSERT INTO backup_object_sums (object_key, size_bytes, sha256, recorded_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (object_key) DO UPDATE SET size_bytes = excluded.size_bytes, sha256 = excluded.sha256,
           recorded_at = excluded.recorded_at`,
      )
      .run(key, sum.size_bytes, sum.sha256, at.toISOString());
  }

  /** The recorded sum; none for an object stored before sums were recorded. */
  of(key: string): ObjectSum | undefined {
    return this.db.prepare('SELECT size_bytes, sha256 FROM backup_object_sums WHERE object_key = ?').get(key) as ObjectSum | undefined;
  }

  forget(key: string): void {
    this.db.prepare('DELETE FROM backup_object_sums WHERE object_key = ?').run(key);
  }
}
