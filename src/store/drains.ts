import { randomUUID } from 'node:crypto';
import type { Db } from './database.js';
import type { StoreSecrets } from './store-secrets.js';

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

/**
 * Log drains of applications; the drain service follows every change. The URL (it may carry
 * credentials or a token) and the username and password are sealed in the store
 * (secret-box.ts); rows are returned opened.
 */
export class DrainRepository {
  private readonly listeners = new Set<Listener>();

  constructor(
    private readonly db: Db,
    private readonly secrets: StoreSecrets,
  ) {}

  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  all(): DrainRow[] {
    return (this.db.prepare('SELECT * FROM drains ORDER BY created_at, id').all() as DrainRow[]).map((row) => this.opened(row));
  }

  ofApp(appId: string): DrainRow[] {
    const rows = this.db.prepare('SELECT * FROM drains WHERE app_id = ? ORDER BY created_at, id').all(appId) as DrainRow[];
    return rows.map((row) => this.opened(row));
  }

  byId(id: string): DrainRow | undefined {
    const row = this.db.prepare('SELECT * FROM drains WHERE id = ?').get(id) as DrainRow | undefined;
    return row && this.opened(row);
  }

  private opened(row: DrainRow): DrainRow {
    return {
      ...row,
      url: this.secrets.open(row.url, place(row, 'url')),
      username: this.secrets.openNullable(row.username, place(row, 'username')),
      password: this.secrets.openNullable(row.password, place(row, 'password')),
    };
  }

  add(drain: Omit<DrainRow, 'id' | 'created_at' | 'enabled'>): DrainRow {
    const row: DrainRow = { ...drain, id: `drain_${randomUUID()}`, enabled: 1, created_at: new Date().toISOString() };
    this.db
      .prepare(
        `INSERT INTO drains (id, app_id, type, url, username, password, with_access_logs, enabled, created_at)
         VALUES (@id, @app_id, @type, @url, @username, @password, @with_access_logs, @enabled, @created_at)`,
      )
      .run({
        ...row,
        url: this.secrets.seal(row.url, place(row, 'url')),
        username: this.secrets.sealNullable(row.username, place(row, 'username')),
        password: this.secrets.sealNullable(row.password, place(row, 'password')),
      });
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

function place(row: { app_id: string; id: string }, column: 'url' | 'username' | 'password') {
  return { table: 'drains', column, owner: [row.app_id, row.id] };
}
