import type { Db } from './database.js';
import { newId } from '../core/ids.js';
import type { DeploymentPhase } from '../core/phase-error.js';

export type DeploymentState = 'WIP' | 'OK' | 'FAIL' | 'CANCELLED';
/** Phases fail distinctly, so the user knows which one broke. */
export type { DeploymentPhase };

export interface Deployment {
  id: string;
  app_id: string;
  commit_sha: string;
  state: DeploymentState;
  cause: string;
  phase: DeploymentPhase | null;
  message: string | null;
  user_id: string | null;
  created_at: string;
  finished_at: string | null;
  /** How to start the release this deployment served (OK deployments only). */
  release_json?: string | null;
}

export interface Release {
  app_id: string;
  deployment_id: string;
  release_dir: string;
  start_json: string;
  wanted: 'running' | 'stopped';
}

/** Told of each deployment that reached a final state (OK, FAIL, CANCELLED), after the store recorded it. */
export type DeploymentFinishedListener = (deployment: Deployment) => void;

export class DeploymentRepository {
  private readonly finishedListeners = new Set<DeploymentFinishedListener>();

  constructor(private readonly db: Db) {}

  onFinished(listener: DeploymentFinishedListener): () => void {
    this.finishedListeners.add(listener);
    return () => this.finishedListeners.delete(listener);
  }

  /** How many deployments are stored in each state. */
  countByState(): Record<string, number> {
    const rows = this.db.prepare('SELECT state, COUNT(*) AS n FROM deployments GROUP BY state').all() as Array<{
      state: string;
      n: number;
    }>;
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  }

  create(input: { appId: string; commit: string; cause: string; userId: string | null }): Deployment {
    const row: Deployment = {
      id: newId('deployment'),
      app_id: input.appId,
      commit_sha: input.commit,
      state: 'WIP',
      cause: input.cause,
      phase: 'queued',
      message: null,
      user_id: input.userId,
      created_at: new Date().toISOString(),
      finished_at: null,
    };
    this.db
      .prepare(
        'INSERT INTO deployments (id, app_id, commit_sha, state, cause, phase, message, user_id, created_at, finished_at) VALUES (@id, @app_id, @commit_sha, @state, @cause, @phase, @message, @user_id, @created_at, @finished_at)',
      )
      .run(row);
    return row;
  }

  byId(id: string): Deployment | undefined {
    return this.db.prepare('SELECT * FROM deployments WHERE id = ?').get(id) as Deployment | undefined;
  }

  listForApp(appId: string, limit = 10): Deployment[] {
    return this.db
      .prepare('SELECT * FROM deployments WHERE app_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?')
      .all(appId, limit) as Deployment[];
  }

  setPhase(id: string, phase: DeploymentPhase): void {
    this.db.prepare('UPDATE deployments SET phase = ? WHERE id = ?').run(phase, id);
  }

  finish(id: string, state: Exclude<DeploymentState, 'WIP'>, message: string | null): void {
    const { changes } = this.db
      .prepare("UPDATE deployments SET state = ?, message = ?, finished_at = ? WHERE id = ? AND state = 'WIP'")
      .run(state, message, new Date().toISOString(), id);
    if (changes === 0 || this.finishedListeners.size === 0) return;
    const deployment = this.byId(id);
    for (const listener of this.finishedListeners) if (deployment) listener(deployment);
  }

  /** Deployments left WIP by a daemon that stopped mid-way: they cannot resume. */
  /** Deployments not finished, oldest first (at daemon start: what the last daemon left). */
  unfinished(): Deployment[] {
    return this.db.prepare("SELECT * FROM deployments WHERE state = 'WIP' ORDER BY created_at, rowid").all() as Deployment[];
  }

  cancelUnfinished(reason: string): number {
    return this.db
      .prepare("UPDATE deployments SET state = 'CANCELLED', message = ?, finished_at = ? WHERE state = 'WIP'")
      .run(reason, new Date().toISOString()).changes;
  }

  setReleaseJson(id: string, json: string): void {
    this.db.prepare('UPDATE deployments SET release_json = ? WHERE id = ?').run(json, id);
  }

  /** OK deployments of an app that recorded their release, newest first. */
  withReleases(appId: string, limit = 200): Deployment[] {
    return this.db
      .prepare(
        "SELECT * FROM deployments WHERE app_id = ? AND state = 'OK' AND release_json IS NOT NULL ORDER BY created_at DESC, rowid DESC LIMIT ?",
      )
      .all(appId, limit) as Deployment[];
  }

  lastOk(appId: string): Deployment | undefined {
    return this.db
      .prepare("SELECT * FROM deployments WHERE app_id = ? AND state = 'OK' ORDER BY created_at DESC, rowid DESC LIMIT 1")
      .get(appId) as Deployment | undefined;
  }

  release(appId: string): Release | undefined {
    return this.db.prepare('SELECT * FROM releases WHERE app_id = ?').get(appId) as Release | undefined;
  }

  allReleases(): Release[] {
    return this.db.prepare('SELECT * FROM releases').all() as Release[];
  }

  setRelease(release: Release): void {
    this.db
      .prepare(
        'INSERT INTO releases (app_id, deployment_id, release_dir, start_json, wanted) VALUES (@app_id, @deployment_id, @release_dir, @start_json, @wanted) ON CONFLICT (app_id) DO UPDATE SET deployment_id = excluded.deployment_id, release_dir = excluded.release_dir, start_json = excluded.start_json, wanted = excluded.wanted',
      )
      .run(release);
  }

  setWanted(appId: string, wanted: 'running' | 'stopped'): void {
    this.db.prepare('UPDATE releases SET wanted = ? WHERE app_id = ?').run(wanted, appId);
  }
}
