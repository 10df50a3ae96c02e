import type { Db } from './database.js';
import { newId } from '../core/ids.js';
import { ConflictError } from '../core/errors.js';
import type { Region } from '../core/names.js';

export interface AppRow {
  id: string;
  org_id: string;
  name: string;
  type: string;
  region: Region;
  created_at: string;
  /** How many instances serve the app (1 until scaled). */
  instances?: number;
  /** Flavour of its instances and of its builds (src/core/flavors.ts). */
  flavor?: string;
  build_flavor?: string;
  /** Its disk budget (`slipway scale --disk`); null: the daemon's `--app-disk-budget`. */
  disk_budget_bytes?: number | null;
  /** The range the autoscaler keeps `instances` in (null: fixed at `instances`). */
  min_instances?: number | null;
  max_instances?: number | null;
  /** The range of instance flavours (null: fixed at `flavor`). */
  min_flavor?: string | null;
  max_flavor?: string | null;
  /** The app's overrides of the autoscaler's settings, JSON (src/autoscaling/settings.ts); null: the defaults. */
  autoscaling_json?: string | null;
  /** 1: the minimum is 0 instances (`--min-instances 0`), the app sleeps when idle; min_instances then holds 1. */
  scale_to_zero?: number;
  /** When its instances were stopped for lack of requests; null: awake (src/autoscaling/README.md). */
  asleep_since?: string | null;
  /**
   * The range of the app's worker instances (`--min-workers`, `--max-workers`) and their count
   * now; null: no range, the workers run beside each instance (src/serving/worker-pool.ts).
   */
  min_workers?: number | null;
  max_workers?: number | null;
  worker_instances?: number | null;
}

/** An app's scaling ranges, as stored (each bound already checked by the API). */
export interface ScalingRanges {
  minInstances: number;
  maxInstances: number;
  minFlavor: string;
  maxFlavor: string;
}

export class AppRepository {
  constructor(private readonly db: Db) {}

  create(input: { orgId: string; name: string; type: string; region: Region }): AppRow {
    if (this.byName(input.orgId, input.name)) {
      throw new ConflictError(
        `The organisation already has an application named ${JSON.stringify(input.name)}.`,
        'Choose another name, or link the existing one with `slipway link <name>`.',
      );
    }
    const app: AppRow = {
      id: newId('app'),
      org_id: input.orgId,
      name: input.name,
      type: input.type,
      region: input.region,
      created_at: new Date().toISOString(),
    };
    this.db
      .prepare('INSERT INTO apps (id, org_id, name, type, region, created_at) VALUES (@id, @org_id, @name, @type, @region, @created_at)')
      .run(app);
    return app;
  }

  byId(id: string): AppRow | undefined {
    return this.db.prepare('SELECT * FROM apps WHERE id = ?').get(id) as AppRow | undefined;
  }

  byName(orgId: string, name: string): AppRow | undefined {
    return this.db.prepare('SELECT * FROM apps WHERE org_id = ? AND name = ?').get(orgId, name) as AppRow | undefined;
  }

  /** Apps of every organisation the user belongs to. */
  listForUser(userId: string): AppRow[] {
    return this.db
      .prepare('SELECT a.* FROM apps a JOIN memberships m ON m.org_id = a.org_id WHERE m.user_id = ? ORDER BY a.created_at')
      .all(userId) as AppRow[];
  }

  listForOrg(orgId: string): AppRow[] {
    return this.db.prepare('SELECT * FROM apps WHERE org_id = ? ORDER BY created_at').all(orgId) as AppRow[];
  }

  all(): AppRow[] {
    return this.db.prepare('SELECT * FROM apps ORDER BY created_at').all() as AppRow[];
  }

  /** The flavour names of an app's instances and builds (canonical, as the API stored them). */
  flavors(id: string): { flavor: string; buildFlavor: string } | undefined {
    const row = this.db.prepare('SELECT flavor, build_flavor FROM apps WHERE id = ?').get(id) as
      | { flavor: string; build_flavor: string }
      | undefined;
    return row && { flavor: row.flavor, buildFlavor: row.build_flavor };
  }

  /** Sets the flavours given (already checked against src/core/flavors.ts); both at once or neither. */
  setFlavors(id: string, flavors: { flavor?: string; buildFlavor?: string }): void {
    this.db.transaction(() => {
      if (flavors.flavor) this.db.prepare('UPDATE apps SET flavor = ? WHERE id = ?').run(flavors.flavor, id);
      if (flavors.buildFlavor) this.db.prepare('UPDATE apps SET build_flavor = ? WHERE id = ?').run(flavors.buildFlavor, id);
    })();
  }

  /**
   * Sets the ranges and the count and flavour inside them at once, so that no reader sees a count
   * outside its range.
   */
  setScaling(id: string, ranges: ScalingRanges, current: { instances: number; flavor: string }): void {
    this.db
      .prepare(
        'UPDATE apps SET min_instances = ?, max_instances = ?, min_flavor = ?, max_flavor = ?, instances = ?, flavor = ? WHERE id = ?',
      )
      .run(ranges.minInstances, ranges.maxInstances, ranges.minFlavor, ranges.maxFlavor, current.instances, current.flavor, id);
  }

  /** Whether the app's minimum is 0 instances (the check of min_instances says 1 to 40: see migration 023). */
  setScaleToZero(id: string, on: boolean): void {
    this.db.prepare('UPDATE apps SET scale_to_zero = ? WHERE id = ?').run(on ? 1 : 0, id);
  }

  /** The app went to sleep at `since` (its instances stopped), or woke (null). */
  setAsleep(id: string, since: string | null): void {
    this.db.prepare('UPDATE apps SET asleep_since = ? WHERE id = ?').run(since, id);
  }

  /** The app's overrides of the autoscaler's settings (JSON), null for the defaults. */
  setAutoscaling(id: string, json: string | null): void {
    this.db.prepare('UPDATE apps SET autoscaling_json = ? WHERE id = ?').run(json, id);
  }

  /** The range of the app's worker instances and their count in it, or null for none (workers beside each instance). */
  setWorkerRange(id: string, range: { min: number; max: number; count: number } | null): void {
    this.db
      .prepare('UPDATE apps SET min_workers = ?, max_workers = ?, worker_instances = ? WHERE id = ?')
      .run(range?.min ?? null, range?.max ?? null, range?.count ?? null, id);
  }

  /** The count of worker instances the autoscaler chose (inside the range). */
  setWorkerInstances(id: string, count: number): void {
    this.db.prepare('UPDATE apps SET worker_instances = ? WHERE id = ? AND max_workers IS NOT NULL').run(count, id);
  }

  setInstances(id: string, count: number): void {
    this.db.prepare('UPDATE apps SET instances = ? WHERE id = ?').run(count, id);
  }

  setDiskBudget(id: string, bytes: number): void {
    this.db.prepare('UPDATE apps SET disk_budget_bytes = ? WHERE id = ?').run(bytes, id);
  }

  remove(id: string): void {
    this.db.prepare('DELETE FROM apps WHERE id = ?').run(id);
  }
}
