import type { Db } from './database.js';

export interface EnvVar {
  name: string;
  value: string;
}

export class EnvVarRepository {
  constructor(private readonly db: Db) {}

  list(appId: string): EnvVar[] {
    return this.db.prepare('SELECT name, value FROM env_vars WHERE app_id = ? ORDER BY name').all(appId) as EnvVar[];
  }

  asRecord(appId: string): Record<string, string> {
    return Object.fromEntries(this.list(appId).map((v) => [v.name, v.value]));
  }

  set(appId: string, name: string, value: string): void {
    this.db
      .prepare(
        'INSERT INTO env_vars (app_id, name, value) VALUES (?, ?, ?) ON CONFLICT (app_id, name) DO UPDATE SET value = excluded.value',
      )
      .run(appId, name, value);
  }

  remove(appId: string, name: string): boolean {
    return this.db.prepare('DELETE FROM env_vars WHERE app_id = ? AND name = ?').run(appId, name).changes > 0;
  }

  /** Replaces every variable at once (import, or the console's "Update changes"). */
  replaceAll(appId: string, vars: EnvVar[]): void {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM env_vars WHERE app_id = ?').run(appId);
      const insert = this.db.prepare('INSERT INTO env_vars (app_id, name, value) VALUES (?, ?, ?)');
      for (const v of vars) insert.run(appId, v.name, v.value);
    })();
  }
}
