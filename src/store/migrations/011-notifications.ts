/**
 * Notifications: an app's webhooks and e-mail subscriptions, the addresses users are mailed at,
 * and the deliveries of events to them with each attempt (what `slipway webhooks deliveries`
 * shows). A webhook's secret is kept because every payload is signed with it; the store file is
 * root's alone, and the API answers it only once, at creation.
 */
export const sql = `
CREATE TABLE notification_webhooks (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  url TEXT NOT NULL,
  format TEXT NOT NULL CHECK (format IN ('raw', 'slack')),
  events TEXT NOT NULL,
  secret TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (app_id, name)
);
CREATE TABLE notification_emails (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  targets TEXT NOT NULL,
  events TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (app_id, name)
);
CREATE TABLE user_email_addresses (
  user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  address TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE notification_deliveries (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  webhook_id TEXT REFERENCES notification_webhooks(id) ON DELETE CASCADE,
  email_id TEXT REFERENCES notification_emails(id) ON DELETE CASCADE,
  event_type TEXT NOT NULL,
  event TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CHECK ((webhook_id IS NULL) <> (email_id IS NULL))
);
CREATE INDEX notification_deliveries_due ON notification_deliveries(state, next_attempt_at);
CREATE INDEX notification_deliveries_by_webhook ON notification_deliveries(webhook_id, created_at);
CREATE INDEX notification_deliveries_by_email ON notification_deliveries(email_id, created_at);
CREATE TABLE notification_attempts (
  delivery_id TEXT NOT NULL REFERENCES notification_deliveries(id) ON DELETE CASCADE,
  attempt INTEGER NOT NULL,
  at TEXT NOT NULL,
  ok INTEGER NOT NULL CHECK (ok IN (0, 1)),
  status_code INTEGER,
  error TEXT,
  duration_ms INTEGER NOT NULL,
  PRIMARY KEY (delivery_id, attempt)
);
`;
