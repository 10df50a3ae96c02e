import { randomUUID } from 'node:crypto';
import type { Db } from './database.js';

export interface DrainRow {
  id: string;
  app_id: string;
  type: string;
  url: string;
  username: string | null;
  password: string | null;
  with_access_logs: 0 | 1;
  enabled: 0 | 1;
  created_at: string;
}

type Listener = () => void;

/** Log drains of applications; the drain service follows every change. */
export class DrainRepository {
  private readonly listeners = new Set<Listener>();

  constructor(private readonly db: Db) {}

  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  all(): DrainRow[] {
    return this.db.prepare('SELECT * FROM drains ORDER BY created_at, id').all() as DrainRow[];
  }

  ofApp(appId: string): DrainRow[] {
    return this.db.prepare('SELECT * FROM drains WHERE app_id = ? ORDER BY created_at, id').all(appId) as DrainRow[];
  }

  byId(id: string): DrainRow | undefined {
    return this.db.prepare('SELECT * FROM drains WHERE id = ?').get(id) as DrainRow | undefined;
  }

  add(drain: Omit<DrainRow, 'id' | 'created_at' | 'enabled'>): DrainRow {
    const row: DrainRow = { ...drain, id: `drain_${randomUUID()}`, enabled: 1, created_at: new Date().toISOString() };
    this.db
      .prepare(
        `INSERT INTO drains (id, app_id, type, url, username, password, with_access_logs, enabled, created_at)
         VALUES (@id, @app_id, @type, @url, @username, @password, @with_access_logs, @enabled, @created_at)`,
      )
      .run(row);
    this.changed();
    return row;
  }

  setEnabled(id: string, enabled: boolean): void {
    this.db.prepare('UPDATE drains SET enabled = ? WHERE id = ?').run(enabled ? 1 : 0, id);
    this.changed();
  }

  remove(id: string): void {
    this.db.prepare('DELETE FROM drains WHERE id = ?').run(id);
    this.changed();
  }
}
