import type { Db } from './database.js';
import type { EnvVar } from './env-vars.js';

/** Variables an app exposes to the apps linked to it (`slipway published-config`). */
export class PublishedConfigRepository {
  constructor(private readonly db: Db) {}

  list(appId: string): EnvVar[] {
    return this.db.prepare('SELECT name, value FROM published_config WHERE app_id = ? ORDER BY name').all(appId) as EnvVar[];
  }

  /** Returns whether anything changed, so an identical value does not redeploy the consumers. */
  set(appId: string, name: string, value: string): boolean {
    const current = this.db.prepare('SELECT value FROM published_config WHERE app_id = ? AND name = ?').get(appId, name) as
      | { value: string }
      | undefined;
    if (current?.value === value) return false;
    this.db
      .prepare(
        'INSERT INTO published_config (app_id, name, value) VALUES (?, ?, ?) ON CONFLICT (app_id, name) DO UPDATE SET value = excluded.value',
      )
      .run(appId, name, value);
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
      for (const v of vars) insert.run(appId, v.name, v.value);
    })();
    return JSON.stringify(this.list(appId)) !== before;
  }
}
