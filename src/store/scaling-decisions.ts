import type { Db } from './database.js';

/** One decision of the autoscaler, as `slipway scale` prints it. */
export interface ScalingDecisionRow {
  id: number;
  app_id: string;
  at: string;
  direction: 'up' | 'down';
  from_instances: number;
  to_instances: number;
  /** A change of flavour: the flavour before and after (null for a change of count). */
  from_flavor: string | null;
  to_flavor: string | null;
  /** "CPU 85% of 3 instances for 8 s". */
  reason: string;
  /** Whether the new count was reached (a new instance that fails its health check: failed). */
  outcome: 'done' | 'failed';
  /** Which count changed: the web instances, or the worker instances (a range of workers of their own). */
  target: 'instances' | 'workers';
}

/** The decisions kept per app: enough to read what happened in the last hours, bounded for a flapping load. */
const KEPT_PER_APP = 50;

export class ScalingDecisionRepository {
  constructor(private readonly db: Db) {}

  add(input: Omit<ScalingDecisionRow, 'id' | 'target'> & { target?: ScalingDecisionRow['target'] }): ScalingDecisionRow {
    const row = { ...input, target: input.target ?? 'instances' };
    return this.db.transaction(() => {
      const { lastInsertRowid } = this.db
        .prepare(
          `INSERT INTO scaling_decisions (app_id, at, direction, from_instances, to_instances, from_flavor, to_flavor, reason, outcome, target)
           VALUES (@app_id, @at, @direction, @from_instances, @to_instances, @from_flavor, @to_flavor, @reason, @outcome, @target)`,
        )
        .run(row);
      this.db
        .prepare(
          `DELETE FROM scaling_decisions WHERE app_id = ? AND id NOT IN
           (SELECT id FROM scaling_decisions WHERE app_id = ? ORDER BY id DESC LIMIT ${KEPT_PER_APP})`,
        )
        .run(row.app_id, row.app_id);
      return { id: Number(lastInsertRowid), ...row };
    })();
  }

  /** The app's latest decisions, newest first. */
  latest(appId: string, limit = 10): ScalingDecisionRow[] {
    return this.db
      .prepare('SELECT * FROM scaling_decisions WHERE app_id = ? ORDER BY id DESC LIMIT ?')
      .all(appId, limit) as ScalingDecisionRow[];
  }
}
