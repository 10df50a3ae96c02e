/** Deployments and the release that serves each app. */
export const sql = `
CREATE TABLE deployments (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  commit_sha TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('WIP', 'OK', 'FAIL', 'CANCELLED')),
  cause TEXT NOT NULL,
  phase TEXT,
  message TEXT,
  user_id TEXT,
  created_at TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX deployments_by_app ON deployments (app_id, created_at);
CREATE TABLE releases (
  app_id TEXT PRIMARY KEY REFERENCES apps(id) ON DELETE CASCADE,
  deployment_id TEXT NOT NULL REFERENCES deployments(id),
  release_dir TEXT NOT NULL,
  start_json TEXT NOT NULL,
  wanted TEXT NOT NULL DEFAULT 'running' CHECK (wanted IN ('running', 'stopped'))
);
`;
