import type { Store } from '../store/store.js';
import type { AppRow } from '../store/apps.js';
import type { Instance } from '../instances/backend.js';
import { parseReleaseSpec } from './release-spec.js';
import type { ServingTable } from './serving-table.js';
import type { InstanceLauncher } from './instance-launch.js';
import type { InstanceReplacer } from './liveness-monitor.js';
import type { ExclusiveHandover } from './exclusive-handover.js';

/**
 * Puts a new instance in the place of one that stopped answering its liveness checks (the
 * liveness monitor decides when), in AppRuntime's table.
 */
export class InstanceReplacement implements InstanceReplacer {
  /** Stuck instances replaced and being stopped (SIGTERM, then SIGKILL). */
  private readonly stoppingStuck = new Set<Promise<void>>();

  constructor(
    private readonly o: {
      store: Store;
      table: Pick<ServingTable, 'of' | 'serve' | 'applyRoutes' | 'stopping'>;
      launcher: Pick<InstanceLauncher, 'launch'>;
      log(line: string): void;
      /** Apps with an exclusive volume: the stuck instance stops before its replacement starts. */
      exclusive?: { handsOver(appId: string): boolean; handover: Pick<ExclusiveHandover, 'replaceStuck'> };
    },
  ) {}

  /**
   * Puts a new instance of the same number and release in the place of one that stopped
   * answering: it must pass the health check first; then the router switches to it and the
   * stuck one gets SIGTERM, then SIGKILL. Undefined when the stuck one left service meanwhile
   * (stopped, scaled down, redeployed): the new one is stopped then. Throws when it failed.
   */
  async replaceInstance(app: AppRow, stuck: Instance, log: (line: string) => void, cancel?: AbortSignal): Promise<Instance | undefined> {
    const { table } = this.o;
    const serves = () => table.of(app.id).includes(stuck);
    const record = this.o.store.deployments.release(app.id);
    if (!serves() || !record || record.wanted !== 'running') return undefined;
    const release = parseReleaseSpec(record.start_json);
    // A deployment is switching (its record comes right after the router): the next try sees it done.
    if (release.deploymentId !== stuck.spec.deploymentId) throw new Error('A deployment of the application is switching its instances.');
    if (this.o.exclusive?.handsOver(app.id)) {
      // Two instances never mount the volume together: held requests wait for the replacement.
      const start = () => this.o.launcher.launch(app, release, log, cancel, stuck.spec.instanceNumber);
      const fresh = await this.o.exclusive.handover.replaceStuck(app, stuck, start, log);
      log(`Instance ${fresh.id} serves in the place of ${stuck.id}, stopped before it started`);
      return fresh;
    }
    const fresh = await this.o.launcher.launch(app, release, log, cancel, stuck.spec.instanceNumber);
    if (!serves() || cancel?.aborted) {
      await fresh.stop(5000).catch(() => undefined);
      return undefined;
    }
    table.serve(
      app.id,
      table.of(app.id).map((i) => (i === stuck ? fresh : i)),
    );
    await table.applyRoutes();
    log(`Instance ${fresh.id} serves in the place of ${stuck.id}, which is stopped (SIGTERM, then SIGKILL after 5 s)`);
    // Off the replacement's path: a stuck event loop ignores SIGTERM, so this usually takes the whole grace.
    const stopping = stuck.stop(5000).catch((error) => this.o.log(`Stopping the stuck instance ${stuck.id}: ${(error as Error).message}`));
    table.stopping(app.id, stopping);
    this.stoppingStuck.add(stopping);
    void stopping.finally(() => this.stoppingStuck.delete(stopping));
    return fresh;
  }

  /** Resolves once every stuck instance replaced so far has stopped. */
  async stuckStopped(): Promise<void> {
    await Promise.all([...this.stoppingStuck]);
  }
}
