import { randomUUID } from 'node:crypto';
import type { Db } from './database.js';
import { ConflictError, NotFoundError } from '../core/errors.js';

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

/** An application's webhooks, one per name. */
export class WebhookRepository {
  constructor(private readonly db: Db) {}

  ofApp(appId: string): WebhookRow[] {
    return this.db.prepare('SELECT * FROM notification_webhooks WHERE app_id = ? ORDER BY name').all(appId) as WebhookRow[];
  }

  byId(id: string): WebhookRow | undefined {
    return this.db.prepare('SELECT * FROM notification_webhooks WHERE id = ?').get(id) as WebhookRow | undefined;
  }

  byName(appId: string, name: string): WebhookRow | undefined {
    return this.db.prepare('SELECT * FROM notification_webhooks WHERE app_id = ? AND name = ?').get(appId, name) as WebhookRow | undefined;
  }

  /** By its name or its id (the reference removes webhooks by id). */
  find(appId: string, ref: string): WebhookRow | undefined {
    return this.db.prepare('SELECT * FROM notification_webhooks WHERE app_id = ? AND (name = ? OR id = ?)').get(appId, ref, ref) as
      | WebhookRow
      | undefined;
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
      .run(row);
    return row;
  }

  remove(appId: string, name: string): void {
    const removed = this.db.prepare('DELETE FROM notification_webhooks WHERE app_id = ? AND name = ?').run(appId, name);
    if (removed.changes === 0) {
      throw new NotFoundError(`This application has no webhook named ${name}.`, 'List its webhooks with `slipway webhooks`.');
    }
  }
}
