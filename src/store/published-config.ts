import type { Db } from './database.js';
import type { EnvVar } from './env-vars.js';
import type { StoreSecrets } from './store-secrets.js';

/** Variables an app exposes to the apps linked to it (`slipway published-config`). */
export class PublishedConfigRepository {
  constructor(
    private readonly db: Db,
    private readonly secrets: StoreSecrets,
  ) {}

  list(appId: string): EnvVar[] {
    const rows = this.db.prepare('SELECT name, value FROM published_config WHERE app_id = ? ORDER BY name').all(appId) as EnvVar[];
    return rows.map((v) => ({ name: v.name, value: this.secrets.open(v.value, place(appId, v.name)) }));
  }

  /** Returns whether anything changed, so an identical value does not redeploy the consumers. */
  set(appId: string, name: string, value: string): boolean {
    const current = this.db.prepare('SELECT value FROM published_config WHERE app_id = ? AND name = ?').get(appId, name) as
      | { value: string }
      | undefined;
    if (current && this.secrets.open(current.value, place(appId, name)) === value) return false;
    this.db
      .prepare(
        'INSERT INTO published_config (app_id, name, value) VALUES (?, ?, ?) ON CONFLICT (app_id, name) DO UPDATE SET value = excluded.value',
      )
      .run(appId, name, this.secrets.seal(value, place(appId, name)));
    return true;
  }

  remove(appId: string, name: string): boolean {
    return this.db.prepare('DELETE FROM published_config WHERE app_id = ? AND name = ?').run(appId, name).changes > 0;
  }

  /** Replaces every exposed variable at once; returns whether anything changed. */
  replaceAll(appId: string, vars: EnvVar[]): boolean {
    const before = JSON.stringify(this.list(appId));
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM published_config WHERE app_id = ?').run(appId);
      const insert = this.db.prepare('INSERT INTO published_config (app_id, name, value) VALUES (?, ?, ?)');
      for (const v of vars) insert.run(appId, v.name, this.secrets.seal(v.value, place(appId, v.name)));
    })();
    return JSON.stringify(this.list(appId)) !== before;
  }
}

function place(appId: string, name: string) {
  return { table: 'published_config', column: 'value', owner: [appId, name] };
}
