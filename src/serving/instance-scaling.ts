import type { Store } from '../store/store.js';
import type { AppRow } from '../store/apps.js';
import { parseReleaseSpec } from './release-spec.js';
import type { ServingTable } from './serving-table.js';
import type { InstanceLauncher } from './instance-launch.js';
import { Turns } from './turns.js';

/** What scale to zero asks of the router: hold a sleeping app's requests until it wakes. */
export interface SleepHolds {
  sleep(appId: string): Promise<void>;
  wake(appId: string): Promise<void>;
  /** The sleeping apps a request waits for now; undefined when the router cannot tell. */
  wakeRequests(): Promise<Set<string> | undefined>;
}

export interface InstanceScalingOptions {
  store: Store;
  table: ServingTable;
  launcher: Pick<InstanceLauncher, 'launchNumbered'>;
  /** Whether the app has an exclusive volume: one writer at a time, so a wake waits for the sleep's stop. */
  hasExclusiveVolume?(appId: string): boolean;
  /** The router's holds of a sleeping app's requests; absent: apps never sleep. */
  sleepHolds?: SleepHolds;
}

/** How many instances the app's release runs with when it serves: its stored count, at least one. */
export function storedInstanceCount(store: Store, appId: string): number {
  return Math.max(1, store.apps.byId(appId)?.instances ?? 1);
}

/**
 * Changes how many instances serve an app's current release, zero included (scale to zero). The
 * count is the one stored for the app. Changes of one app run one after the other (a person's
 * scale, the autoscaler's, a sleep and a wake may meet): each reads the count and the table as the
 * one before left them, so two scale-ups never both start the missing instances.
 */
export class InstanceScaling {
  /** The change under way for each app, the next one chained after it. */
  private readonly turns = new Turns();

  constructor(private readonly o: InstanceScalingOptions) {}

  /**
   * New instances start, pass their health check and join the routing table; removed ones (the
   * highest numbers) leave it first, then drain and stop.
   */
  scale(app: AppRow, log: (line: string) => void): Promise<void> {
    return this.turns.run(app.id, () => this.scaleNow(app, log));
  }

  /** Whether apps can sleep here (the router holds a sleeping app's requests). */
  canSleep(): boolean {
    return this.o.sleepHolds !== undefined;
  }

  /** The sleeping apps a request waits for at the router now. */
  wakeRequests(): Promise<Set<string> | undefined> {
    return this.o.sleepHolds?.wakeRequests() ?? Promise.resolve(undefined);
  }

  /**
   * The app's new requests are held at the router first (they will wake it), then its instances
   * leave the routing table and drain (requests in flight finish) and stop. The caller records
   * the sleep.
   */
  sleep(appId: string): Promise<void> {
    return this.turns.run(appId, async () => {
      const holds = this.o.sleepHolds;
      if (!holds) throw new Error('this router cannot hold requests, so apps cannot sleep');
      await holds.sleep(appId);
      const instances = this.o.table.of(appId);
      this.o.table.serve(appId, []);
      await this.o.table.applyRoutes();
      this.o.table.drainInBackground(appId, instances);
    });
  }

  /**
   * The stored count of the app's current release's instances start and pass their health
   * check, join the routing table, and then the router lets the held requests go on to them.
   * Throws (the app stays asleep and held) when none could start.
   */
  wake(app: AppRow, log: (line: string) => void): Promise<void> {
    return this.turns.run(app.id, async () => {
      const { store, table, launcher } = this.o;
      const record = store.deployments.release(app.id);
      if (record && record.wanted === 'running' && table.of(app.id).length === 0) {
        // An exclusive volume has one writer at a time: the instance the sleep stopped is gone first.
        if (this.o.hasExclusiveVolume?.(app.id)) await table.drained(app.id);
        const numbers = Array.from({ length: storedInstanceCount(this.o.store, app.id) }, (_, n) => n);
        const { healthy, failure } = await launcher.launchNumbered(app, parseReleaseSpec(record.start_json), log, numbers);
        if (healthy.length === 0) throw failure?.reason;
        table.serve(app.id, healthy);
        await table.applyRoutes();
      }
      await this.o.sleepHolds?.wake(app.id);
    });
  }

  private async scaleNow(app: AppRow, log: (line: string) => void): Promise<void> {
    const { store, table, launcher } = this.o;
    const wanted = storedInstanceCount(this.o.store, app.id);
    const current = table.of(app.id);
    const record = store.deployments.release(app.id);
    if (current.length === 0 || !record || record.wanted !== 'running') return;
    if (wanted > current.length) {
      const numbers = Array.from({ length: wanted - current.length }, (_, k) => current.length + k);
      // The healthy ones serve even when another failed (it stopped itself): none is left
      // running outside the table, and a retry starts only what is still missing.
      const { healthy, failure } = await launcher.launchNumbered(app, parseReleaseSpec(record.start_json), log, numbers);
      // Read again: an instance replaced meanwhile (liveness) keeps its replacement.
      table.serve(app.id, [...(table.has(app.id) ? table.of(app.id) : current), ...healthy]);
      await table.applyRoutes();
      if (failure) throw failure.reason;
    } else if (wanted < current.length) {
      table.serve(app.id, current.slice(0, wanted));
      await table.applyRoutes();
      table.drainInBackground(app.id, current.slice(wanted));
    }
  }
}
