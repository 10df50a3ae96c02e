import type { Db } from './database.js';

/** An application's own unix user; its group has the same name and number. */
export interface AppUserRow {
  app_id: string;
  name: string;
  uid: number;
  created_at: string;
}

export class AppUserRepository {
  constructor(private readonly db: Db) {}

  forApp(appId: string): AppUserRow | undefined {
    return this.db.prepare('SELECT * FROM app_users WHERE app_id = ?').get(appId) as AppUserRow | undefined;
  }

  all(): AppUserRow[] {
    return this.db.prepare('SELECT * FROM app_users ORDER BY uid').all() as AppUserRow[];
  }

  usedIds(): Set<number> {
    return new Set((this.db.prepare('SELECT uid FROM app_users').all() as Array<{ uid: number }>).map((r) => r.uid));
  }

  record(row: Omit<AppUserRow, 'created_at'>): AppUserRow {
    const full = { ...row, created_at: new Date().toISOString() };
    this.db.prepare('INSERT INTO app_users (app_id, name, uid, created_at) VALUES (@app_id, @name, @uid, @created_at)').run(full);
    return full;
  }

  forget(appId: string): void {
    this.db.prepare('DELETE FROM app_users WHERE app_id = ?').run(appId);
  }
}
