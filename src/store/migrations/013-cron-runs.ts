/**
 * Cron jobs' runs (docs/behaviour.md, Cron jobs). `cron_jobs` holds, for each job of an app's
 * current release (by its key: schedule and command), the last schedule time the scheduler
 * handled: after a daemon restart, the times between it and now are the runs missed while no
 * daemon ran. `cron_runs` is each job's recent history: runs (one without `finished_at` is
 * still going), runs skipped because the previous one still ran, and missed ones.
 */
export const sql = `
CREATE TABLE cron_jobs (
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  job_key TEXT NOT NULL,
  checked_until TEXT NOT NULL,
  PRIMARY KEY (app_id, job_key)
);

CREATE TABLE cron_runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  job_key TEXT NOT NULL,
  job_name TEXT NOT NULL,
  scheduled_for TEXT NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('running', 'succeeded', 'failed', 'timed-out', 'killed', 'skipped', 'missed')),
  started_at TEXT,
  finished_at TEXT,
  duration_ms INTEGER,
  exit_code INTEGER,
  detail TEXT
);
CREATE INDEX cron_runs_by_job ON cron_runs(app_id, job_key, id);
`;
