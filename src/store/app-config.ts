import type { Db } from './database.js';

export class AppConfigRepository {
  constructor(private readonly db: Db) {}

  all(appId: string): Record<string, string> {
    const rows = this.db.prepare('SELECT name, value FROM app_config WHERE app_id = ?').all(appId) as Array<{
      name: string;
      value: string;
    }>;
    return Object.fromEntries(rows.map((r) => [r.name, r.value]));
  }

  set(appId: string, name: string, value: string): void {
    this.db
      .prepare(
        'INSERT INTO app_config (app_id, name, value) VALUES (?, ?, ?) ON CONFLICT (app_id, name) DO UPDATE SET value = excluded.value',
      )
      .run(appId, name, value);
  }
}
