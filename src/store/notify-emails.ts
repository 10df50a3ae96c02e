import { randomUUID } from 'node:crypto';
import type { Db } from './database.js';
import { ConflictError, NotFoundError } from '../core/errors.js';

export interface NotifyEmailRow {
  id: string;
  app_id: string;
  name: string;
  /** JSON array: addresses, `user` (who caused the event), `ORGANISATION` (every member), user ids. */
  targets: string;
  /** JSON array of event names; empty: every event. */
  events: string;
  created_at: string;
}

/** An application's e-mail notifications, and the address each user is mailed at. */
export class NotifyEmailRepository {
  constructor(private readonly db: Db) {}

  ofApp(appId: string): NotifyEmailRow[] {
    return this.db.prepare('SELECT * FROM notification_emails WHERE app_id = ? ORDER BY name').all(appId) as NotifyEmailRow[];
  }

  byId(id: string): NotifyEmailRow | undefined {
    return this.db.prepare('SELECT * FROM notification_emails WHERE id = ?').get(id) as NotifyEmailRow | undefined;
  }

  /** By its name or its id. */
  find(appId: string, ref: string): NotifyEmailRow | undefined {
    return this.db.prepare('SELECT * FROM notification_emails WHERE app_id = ? AND (name = ? OR id = ?)').get(appId, ref, ref) as
      | NotifyEmailRow
      | undefined;
  }

  add(input: { appId: string; name: string; targets: string[]; events: string[] }): NotifyEmailRow {
    if (this.find(input.appId, input.name)) {
      throw new ConflictError(
        `This application already has an e-mail notification named ${input.name}.`,
        'Pick another name, or remove it first.',
      );
    }
    const row: NotifyEmailRow = {
      id: `notify_${randomUUID()}`,
      app_id: input.appId,
      name: input.name,
      targets: JSON.stringify(input.targets),
      events: JSON.stringify(input.events),
      created_at: new Date().toISOString(),
    };
    this.db
      .prepare(
        'INSERT INTO notification_emails (id, app_id, name, targets, events, created_at) VALUES (@id, @app_id, @name, @targets, @events, @created_at)',
      )
      .run(row);
    return row;
  }

  remove(appId: string, ref: string): void {
    const removed = this.db.prepare('DELETE FROM notification_emails WHERE app_id = ? AND (name = ? OR id = ?)').run(appId, ref, ref);
    if (removed.changes === 0) {
      throw new NotFoundError(
        `This application has no e-mail notification ${JSON.stringify(ref)}.`,
        'List them with `slipway notify-email list`.',
      );
    }
  }

  addressOf(userId: string): string | undefined {
    return (this.db.prepare('SELECT address FROM user_email_addresses WHERE user_id = ?').get(userId) as { address: string } | undefined)
      ?.address;
  }

  setAddress(userId: string, address: string): void {
    this.db
      .prepare(
        'INSERT INTO user_email_addresses (user_id, address, updated_at) VALUES (?, ?, ?) ON CONFLICT (user_id) DO UPDATE SET address = excluded.address, updated_at = excluded.updated_at',
      )
      .run(userId, address, new Date().toISOString());
  }
}
