import { randomUUID } from 'node:crypto';
import type { Db } from './database.js';
import { ConflictError, NotFoundError } from '../core/errors.js';
import type { StoreSecrets } from './store-secrets.js';

export interface WebhookRow {
  id: string;
  app_id: string;
  name: string;
  url: string;
  format: 'raw' | 'slack';
  /** JSON array of event names; empty: every event. */
  events: string;
  /** Kept to sign each payload; answered by the API only when the webhook is created. */
  secret: string;
  created_at: string;
}

/**
 * An application's webhooks, one per name. The URL (it may carry a token: Slack's do) and the
 * signing secret are sealed in the store (secret-box.ts); rows are returned opened.
 */
export class WebhookRepository {
  constructor(
    private readonly db: Db,
    private readonly secrets: StoreSecrets,
  ) {}

  ofApp(appId: string): WebhookRow[] {
    const rows = this.db.prepare('SELECT * FROM notification_webhooks WHERE app_id = ? ORDER BY name').all(appId) as WebhookRow[];
    return rows.map((row) => this.opened(row));
  }

  byId(id: string): WebhookRow | undefined {
    return this.opened(this.db.prepare('SELECT * FROM notification_webhooks WHERE id = ?').get(id) as WebhookRow | undefined);
  }

  byName(appId: string, name: string): WebhookRow | undefined {
    return this.opened(
      this.db.prepare('SELECT * FROM notification_webhooks WHERE app_id = ? AND name = ?').get(appId, name) as WebhookRow | undefined,
    );
  }

  /** By its name or its id (the reference removes webhooks by id). */
  find(appId: string, ref: string): WebhookRow | undefined {
    return this.opened(
      this.db.prepare('SELECT * FROM notification_webhooks WHERE app_id = ? AND (name = ? OR id = ?)').get(appId, ref, ref) as
        | WebhookRow
        | undefined,
    );
  }

  private opened<T extends WebhookRow | undefined>(row: T): T {
    if (!row) return row;
    return { ...row, url: this.secrets.open(row.url, place(row, 'url')), secret: this.secrets.open(row.secret, place(row, 'secret')) };
  }

  add(input: { appId: string; name: string; url: string; format: 'raw' | 'slack'; events: string[]; secret: string }): WebhookRow {
    if (this.byName(input.appId, input.name)) {
      throw new ConflictError(`This application already has a webhook named ${input.name}.`, 'Pick another name, or remove it first.');
    }
    const row: WebhookRow = {
      id: `webhook_${randomUUID()}`,
      app_id: input.appId,
      name: input.name,
      url: input.url,
      format: input.format,
      events: JSON.stringify(input.events),
      secret: input.secret,
      created_at: new Date().toISOString(),
    };
    this.db
      .prepare(
        'INSERT INTO notification_webhooks (id, app_id, name, url, format, events, secret, created_at) VALUES (@id, @app_id, @name, @url, @format, @events, @secret, @created_at)',
      )
      .run({ ...row, url: this.secrets.seal(row.url, place(row, 'url')), secret: this.secrets.seal(row.secret, place(row, 'secret')) });
    return row;
  }

  remove(appId: string, name: string): void {
    const removed = this.db.prepare('DELETE FROM notification_webhooks WHERE app_id = ? AND name = ?').run(appId, name);
    if (removed.changes === 0) {
      throw new NotFoundError(`This application has no webhook named ${name}.`, 'List its webhooks with `slipway webhooks`.');
    }
  }
}

function place(row: { app_id: string; id: string }, column: 'url' | 'secret') {
  return { table: 'notification_webhooks', column, owner: [row.app_id, row.id] };
}
