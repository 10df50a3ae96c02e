import type { AppRow } from '../store/apps.js';
import type { Store } from '../store/store.js';
import type { Instance } from '../instances/backend.js';
import { parseReleaseSpec } from './release-spec.js';
import type { ServingTable } from './serving-table.js';
import type { InstanceLauncher } from './instance-launch.js';

/** What a handover asks of the router: hold an app's new requests, and say what its instances still serve. */
export interface RequestHolds {
  hold(appId: string): Promise<void>;
  release(appId: string): Promise<void>;
  appConnections(): Promise<Map<string, number> | undefined>;
}

/** How long the requests already with the old instance may take to finish once new ones are held. */
const IN_FLIGHT_TIMEOUT_MS = 20_000;
/** SIGTERM, then SIGKILL after this: the grace of the instance giving the volume up. */
const STOP_GRACE_MS = 10_000;

/**
 * The switch of an app with an exclusive volume (src/addons/fs-bucket/README.md, "Exclusive
 * volumes"): two instances never mount the volume together, so the new release cannot start
 * beside the old one as every other switch does. The router holds the app's new requests
 * (queued, not refused); the old instance finishes what it serves and stops; the new one starts
 * on the volume and passes its health check; the router sends the held requests to it. A new
 * release that fails to start gives the volume back: the previous release starts again and
 * serves the held requests.
 */
export class ExclusiveHandover {
  constructor(
    private readonly o: {
      store: Store;
      table: Pick<ServingTable, 'of' | 'serve' | 'applyRoutes'>;
      launcher: Pick<InstanceLauncher, 'launchNumbered'>;
      /** Absent (a router that cannot hold): requests meanwhile find no instance (503) instead of waiting. */
      holds?: RequestHolds;
      log(line: string): void;
    },
  ) {}

  /**
   * Switches the app from what serves it to what `start` starts (healthy instances), the volume
   * handed over between them. Resolves once the new instances serve; throws `start`'s error
   * once the previous release serves again.
   */
  async handOver(app: AppRow, start: () => Promise<Instance[]>, log: (line: string) => void): Promise<Instance[]> {
    const started = Date.now();
    const took = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
    const previous = this.o.table.of(app.id);
    await this.o.holds?.hold(app.id);
    try {
      if (previous.length > 0) {
        log('==> [handover] The app has an exclusive volume: its requests wait at the router while the volume changes hands');
        await this.inFlightDone(app.id);
        const drained = took();
        await this.stopServing(app.id, previous);
        log(
          `==> [handover] The previous instance finished its requests (${drained}) and stopped (${took()}); the new one starts on the volume`,
        );
      }
      let next: Instance[];
      const starting = Date.now();
      try {
        next = await start();
      } catch (error) {
        if (previous.length > 0) await this.bringBack(app, previous, log);
        throw error;
      }
      this.o.table.serve(app.id, next);
      await this.o.table.applyRoutes();
      const startSeconds = ((Date.now() - starting) / 1000).toFixed(1);
      log(`==> [handover] The new instance started on the volume and passed its health check in ${startSeconds} s; it serves`);
      log(`==> [handover] Requests waited ${took()} at most`);
      return next;
    } finally {
      await this.o.holds?.release(app.id).catch((error) => this.o.log(`Releasing the requests of ${app.id}: ${(error as Error).message}`));
    }
  }

  /**
   * A stuck instance of an app with an exclusive volume (the liveness monitor): held requests,
   * the stuck one stopped (its grace, then SIGKILL), then `start` on the volume.
   */
  async replaceStuck(app: AppRow, stuck: Instance, start: () => Promise<Instance>, log: (line: string) => void): Promise<Instance> {
    await this.o.holds?.hold(app.id);
    try {
      await stuck.stop(5000).catch((error) => this.o.log(`Stopping the stuck instance ${stuck.id}: ${(error as Error).message}`));
      log(`Instance ${stuck.id} stopped (SIGTERM, then SIGKILL after 5 s) to give the exclusive volume to its replacement`);
      const fresh = await start();
      this.o.table.serve(
        app.id,
        this.o.table.of(app.id).map((i) => (i === stuck ? fresh : i)),
      );
      await this.o.table.applyRoutes();
      return fresh;
    } finally {
      await this.o.holds?.release(app.id).catch((error) => this.o.log(`Releasing the requests of ${app.id}: ${(error as Error).message}`));
    }
  }

  /** Resolves once the app's backend serves nothing (the held requests are not with it), or after IN_FLIGHT_TIMEOUT_MS. */
  private async inFlightDone(appId: string): Promise<void> {
    if (!this.o.holds) return;
    const deadline = Date.now() + IN_FLIGHT_TIMEOUT_MS;
    for (;;) {
      const serving = await this.o.holds.appConnections();
      if (!serving || (serving.get(appId) ?? 0) === 0 || Date.now() > deadline) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** The app serves nothing (its requests held); its instances stop, SIGTERM then SIGKILL after the grace. */
  private async stopServing(appId: string, instances: readonly Instance[]): Promise<void> {
    this.o.table.serve(appId, []);
    await this.o.table.applyRoutes();
    await Promise.all(instances.map((i) => i.stop(STOP_GRACE_MS).catch((e) => this.o.log(`Stopping ${i.id}: ${(e as Error).message}`))));
  }

  /** The new release failed: the previous one (the release record still names it) starts again on the volume and serves. */
  private async bringBack(app: AppRow, previous: readonly Instance[], log: (line: string) => void): Promise<void> {
    const record = this.o.store.deployments.release(app.id);
    if (!record) return;
    log('==> [handover] The new release did not start: the previous one starts again on the volume');
    const release = parseReleaseSpec(record.start_json);
    const numbers = previous.map((i) => i.spec.instanceNumber);
    const { healthy: back } = await this.o.launcher.launchNumbered(app, release, log, numbers);
    this.o.table.serve(app.id, back);
    await this.o.table.applyRoutes();
    if (back.length < previous.length) log('==> [handover] The previous release did not start again either: the app serves nothing');
  }
}
