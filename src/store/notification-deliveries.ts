import { randomUUID } from 'node:crypto';
import type { Db } from './database.js';

export interface DeliveryRow {
  id: string;
  app_id: string;
  webhook_id: string | null;
  email_id: string | null;
  event_type: string;
  /** The event as published (JSON); it holds no secrets. */
  event: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  at: string;
  ok: 0 | 1;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/** Deliveries kept per webhook or e-mail notification: the last ones are what people look at. */
const KEPT_PER_TARGET = 50;

/** Events on their way to webhooks and mailboxes, and each attempt to deliver them. */
export class NotificationDeliveryRepository {
  constructor(private readonly db: Db) {}

  enqueue(input: { appId: string; webhookId?: string; emailId?: string; eventType: string; event: string }): DeliveryRow {
    const now = new Date().toISOString();
    const row: DeliveryRow = {
      id: `delivery_${randomUUID()}`,
      app_id: input.appId,
      webhook_id: input.webhookId ?? null,
      email_id: input.emailId ?? null,
      event_type: input.eventType,
      event: input.event,
      state: 'pending',
      attempts: 0,
      next_attempt_at: now,
      created_at: now,
      updated_at: now,
    };
    this.db.transaction(() => {
      this.db
        .prepare(
          'INSERT INTO notification_deliveries (id, app_id, webhook_id, email_id, event_type, event, state, attempts, next_attempt_at, created_at, updated_at) VALUES (@id, @app_id, @webhook_id, @email_id, @event_type, @event, @state, @attempts, @next_attempt_at, @created_at, @updated_at)',
        )
        .run(row);
      const column = row.webhook_id ? 'webhook_id' : 'email_id';
      this.db
        .prepare(
          `DELETE FROM notification_deliveries WHERE ${column} = ? AND state <> 'pending' AND id NOT IN (SELECT id FROM notification_deliveries WHERE ${column} = ? ORDER BY created_at DESC LIMIT ${KEPT_PER_TARGET})`,
        )
        .run(row.webhook_id ?? row.email_id, row.webhook_id ?? row.email_id);
    })();
    return row;
  }

  /** Whether the webhook or e-mail notification got a delivery of this event type since `since`. */
  sentSince(target: { webhookId?: string; emailId?: string }, eventType: string, since: Date): boolean {
    const column = target.webhookId ? 'webhook_id' : 'email_id';
    return (
      this.db
        .prepare(`SELECT 1 FROM notification_deliveries WHERE ${column} = ? AND event_type = ? AND created_at > ? LIMIT 1`)
        .get(target.webhookId ?? target.emailId, eventType, since.toISOString()) !== undefined
    );
  }

  /** Pending deliveries whose next attempt is due, oldest first. */
  due(now: Date, limit: number): DeliveryRow[] {
    return this.db
      .prepare("SELECT * FROM notification_deliveries WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?")
      .all(now.toISOString(), limit) as DeliveryRow[];
  }

  /**
   * Due deliveries, at most `perOrg` of each organisation (its oldest), oldest first: what a fair
   * scheduler picks from, so one organisation's backlog cannot hide another's deliveries.
   */
  dueByOrg(now: Date, perOrg: number): Array<DeliveryRow & { org_id: string }> {
    return this.db
      .prepare(
        `SELECT * FROM (
           SELECT d.*, a.org_id AS org_id,
                  ROW_NUMBER() OVER (PARTITION BY a.org_id ORDER BY d.next_attempt_at, d.id) AS place
           FROM notification_deliveries d JOIN apps a ON a.id = d.app_id
           WHERE d.state = 'pending' AND d.next_attempt_at <= ?
         ) WHERE place <= ? ORDER BY next_attempt_at, id`,
      )
      .all(now.toISOString(), perOrg)
      .map((row) => {
        const { place: _place, ...delivery } = row as DeliveryRow & { org_id: string; place: number };
        return delivery;
      });
  }

  /** When the earliest pending delivery is due, if any is. */
  nextDue(): string | undefined {
    return (
      (
        this.db.prepare("SELECT MIN(next_attempt_at) AS at FROM notification_deliveries WHERE state = 'pending'").get() as {
          at: string | null;
        }
      ).at ?? undefined
    );
  }

  byId(id: string): DeliveryRow | undefined {
    return this.db.prepare('SELECT * FROM notification_deliveries WHERE id = ?').get(id) as DeliveryRow | undefined;
  }

  /**
   * Records one attempt and what follows: delivered, failed for good, or pending again at
   * `nextAttemptAt`.
   */
  recordAttempt(
    id: string,
    attempt: Omit<AttemptRow, 'delivery_id' | 'attempt'>,
    next: { state: DeliveryRow['state']; nextAttemptAt: string | null },
  ): void {
    this.db.transaction(() => {
      const row = this.byId(id);
      if (!row) return; // its webhook was removed meanwhile
      const number = row.attempts + 1;
      this.db
        .prepare(
          'INSERT INTO notification_attempts (delivery_id, attempt, at, ok, status_code, error, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?)',
        )
        .run(id, number, attempt.at, attempt.ok, attempt.status_code, attempt.error, attempt.duration_ms);
      this.db
        .prepare('UPDATE notification_deliveries SET state = ?, attempts = ?, next_attempt_at = ?, updated_at = ? WHERE id = ?')
        .run(next.state, number, next.nextAttemptAt, attempt.at, id);
    })();
  }

  ofWebhook(webhookId: string, limit: number): DeliveryRow[] {
    return this.db
      .prepare('SELECT * FROM notification_deliveries WHERE webhook_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?')
      .all(webhookId, limit) as DeliveryRow[];
  }

  ofEmail(emailId: string, limit: number): DeliveryRow[] {
    return this.db
      .prepare('SELECT * FROM notification_deliveries WHERE email_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?')
      .all(emailId, limit) as DeliveryRow[];
  }

  attemptsOf(deliveryId: string): AttemptRow[] {
    return this.db.prepare('SELECT * FROM notification_attempts WHERE delivery_id = ? ORDER BY attempt').all(deliveryId) as AttemptRow[];
  }
}
