/**
 * Log drains: where an app's log lines (and, when asked, its access log) are forwarded. The
 * lines waiting for a receiver live on disk beside the store (`<data>/drains/<id>`), not here.
 */
export const sql = `
CREATE TABLE drains (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  type TEXT NOT NULL CHECK (type IN ('TCPSyslog', 'UDPSyslog', 'HTTP', 'ElasticSearch')),
  url TEXT NOT NULL,
  username TEXT,
  password TEXT,
  with_access_logs INTEGER NOT NULL DEFAULT 0 CHECK (with_access_logs IN (0, 1)),
  enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  created_at TEXT NOT NULL
);
CREATE INDEX drains_by_app ON drains(app_id);
`;
