import type { Db } from './database.js';

export type CronOutcome = 'running' | 'succeeded' | 'failed' | 'timed-out' | 'killed' | 'skipped' | 'missed';

export interface CronRunRow {
  id: number;
  app_id: string;
  job_key: string;
  job_name: string;
  /** The schedule time the run was for (the first one, for a row telling missed runs). */
  scheduled_for: string;
  outcome: CronOutcome;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  exit_code: number | null;
  /** What a person reads: how it ended, why it was skipped, how many runs were missed. */
  detail: string | null;
}

/** Rows kept per job: enough for the console's history, bounded for an every-minute job. */
const KEPT_PER_JOB = 50;

/** The cron scheduler's state: how far each job was handled, and its recent runs. */
export class CronRunRepository {
  constructor(private readonly db: Db) {}

  checkedUntil(appId: string, jobKey: string): string | undefined {
    const row = this.db.prepare('SELECT checked_until FROM cron_jobs WHERE app_id = ? AND job_key = ?').get(appId, jobKey) as
      | { checked_until: string }
      | undefined;
    return row?.checked_until;
  }

  setCheckedUntil(appId: string, jobKey: string, time: string): void {
    this.db
      .prepare(
        `INSERT INTO cron_jobs (app_id, job_key, checked_until) VALUES (?, ?, ?)
         ON CONFLICT (app_id, job_key) DO UPDATE SET checked_until = excluded.checked_until`,
      )
      .run(appId, jobKey, time);
  }

  /** Forgets the jobs of an app that its release no longer has (their runs with them). */
  keepOnly(appId: string, jobKeys: readonly string[]): void {
    const keys = JSON.stringify(jobKeys);
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM cron_jobs WHERE app_id = ? AND job_key NOT IN (SELECT value FROM json_each(?))').run(appId, keys);
      this.db.prepare('DELETE FROM cron_runs WHERE app_id = ? AND job_key NOT IN (SELECT value FROM json_each(?))').run(appId, keys);
    })();
  }

  /** Records a run, a skip or missed runs; returns its id. */
  add(row: Omit<CronRunRow, 'id'>): number {
    const result = this.db
      .prepare(
        `INSERT INTO cron_runs (app_id, job_key, job_name, scheduled_for, outcome, started_at, finished_at, duration_ms, exit_code, detail)
         VALUES (@app_id, @job_key, @job_name, @scheduled_for, @outcome, @started_at, @finished_at, @duration_ms, @exit_code, @detail)`,
      )
      .run(row);
    this.db
      .prepare(
        `DELETE FROM cron_runs WHERE app_id = ? AND job_key = ? AND id NOT IN
           (SELECT id FROM cron_runs WHERE app_id = ? AND job_key = ? ORDER BY id DESC LIMIT ${KEPT_PER_JOB})`,
      )
      .run(row.app_id, row.job_key, row.app_id, row.job_key);
    return Number(result.lastInsertRowid);
  }

  finish(
    id: number,
    end: { outcome: CronOutcome; finished_at: string; duration_ms: number; exit_code: number | null; detail: string },
  ): void {
    this.db
      .prepare(
        'UPDATE cron_runs SET outcome = @outcome, finished_at = @finished_at, duration_ms = @duration_ms, exit_code = @exit_code, detail = @detail WHERE id = @id',
      )
      .run({ ...end, id });
  }

  /** Runs a daemon left going when it stopped (they were killed with it). */
  running(): CronRunRow[] {
    return this.db.prepare("SELECT * FROM cron_runs WHERE outcome = 'running' ORDER BY id").all() as CronRunRow[];
  }

  /** The job's newest rows first. */
  recent(appId: string, jobKey: string, limit = 10): CronRunRow[] {
    return this.db
      .prepare('SELECT * FROM cron_runs WHERE app_id = ? AND job_key = ? ORDER BY id DESC LIMIT ?')
      .all(appId, jobKey, limit) as CronRunRow[];
  }

  /** The job's newest run that started (running or ended), skips and missed runs aside. */
  lastRun(appId: string, jobKey: string): CronRunRow | undefined {
    return this.db
      .prepare('SELECT * FROM cron_runs WHERE app_id = ? AND job_key = ? AND started_at IS NOT NULL ORDER BY id DESC LIMIT 1')
      .get(appId, jobKey) as CronRunRow | undefined;
  }
}
