import type { Db } from './database.js';
import type { StoreSecrets } from './store-secrets.js';

export interface EnvVar {
  name: string;
  value: string;
}

export class EnvVarRepository {
  constructor(
    private readonly db: Db,
    private readonly secrets: StoreSecrets,
  ) {}

  list(appId: string): EnvVar[] {
    const rows = this.db.prepare('SELECT name, value FROM env_vars WHERE app_id = ? ORDER BY name').all(appId) as EnvVar[];
    return rows.map((v) => ({ name: v.name, value: this.secrets.open(v.value, place(appId, v.name)) }));
  }

  asRecord(appId: string): Record<string, string> {
    return Object.fromEntries(this.list(appId).map((v) => [v.name, v.value]));
  }

  set(appId: string, name: string, value: string): void {
    this.db
      .prepare(
        'INSERT INTO env_vars (app_id, name, value) VALUES (?, ?, ?) ON CONFLICT (app_id, name) DO UPDATE SET value = excluded.value',
      )
      .run(appId, name, this.secrets.seal(value, place(appId, name)));
  }

  remove(appId: string, name: string): boolean {
    return this.db.prepare('DELETE FROM env_vars WHERE app_id = ? AND name = ?').run(appId, name).changes > 0;
  }

  /** Replaces every variable at once (import, or the console's "Update changes"). */
  replaceAll(appId: string, vars: EnvVar[]): void {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM env_vars WHERE app_id = ?').run(appId);
      const insert = this.db.prepare('INSERT INTO env_vars (app_id, name, value) VALUES (?, ?, ?)');
      for (const v of vars) insert.run(appId, v.name, this.secrets.seal(v.value, place(appId, v.name)));
    })();
  }
}

function place(appId: string, name: string) {
  return { table: 'env_vars', column: 'value', owner: [appId, name] };
}
