import type { AppRow } from '../store/apps.js';
import type { Instance, InstanceState } from '../instances/backend.js';
import type { RoutingTable } from '../router/router.js';
import type { ReleaseSpec } from './release-spec.js';
import type { AppRuntimeOptions } from './app-runtime-options.js';
import { LivenessMonitor, type LivenessMonitorOptions, type LivenessNote } from './liveness-monitor.js';
import { restoreReleases } from './restore.js';
import { ServingTable } from './serving-table.js';
import { InstanceLauncher } from './instance-launch.js';
import { InstanceReplacement } from './instance-replacement.js';
import { ExclusiveHandover } from './exclusive-handover.js';
import { WorkerPool } from './worker-pool.js';
import { InstanceScaling, storedInstanceCount } from './instance-scaling.js';

/**
 * Owns the instances that serve each app and the routing table: new instances replace the old
 * ones only after every one of them passed its health check; then the router switches and the
 * old ones drain. An instance that crashed leaves the routing table until it runs again. The
 * table is `ServingTable`'s, an instance's start `InstanceLauncher`'s; the liveness monitor and
 * the restore at a daemon start get the narrow views of them they act on.
 */
export class AppRuntime {
  private readonly table: ServingTable;
  private readonly launcher: InstanceLauncher;
  private readonly replacement: InstanceReplacement;
  private readonly handover: ExclusiveHandover;
  /** The worker instances of the apps whose workers have a range of their own. */
  private readonly workers: WorkerPool;
  private liveness: LivenessMonitor | undefined;
  /** How many instances serve each app: `scale`, and scale to zero's `sleep` and `wake`. */
  readonly scaling: InstanceScaling;

  constructor(private readonly options: AppRuntimeOptions) {
    this.table = new ServingTable(options);
    this.launcher = new InstanceLauncher({
      ...options,
      workersApart: (appId) => this.workers.runsApart(appId),
      onStateChange: (appId, id, state) => this.instanceStateChanged(appId, id, state),
    });
    this.workers = new WorkerPool({ ...options, launcher: this.launcher });
    this.handover = new ExclusiveHandover({
      store: options.store,
      table: this.table,
      launcher: this.launcher,
      holds: options.holds,
      log: options.log,
    });
    this.replacement = new InstanceReplacement({
      store: options.store,
      table: this.table,
      launcher: this.launcher,
      log: options.log,
      exclusive: { handsOver: (appId) => this.handsOver(appId), handover: this.handover },
    });
    this.scaling = new InstanceScaling({ ...options, table: this.table, launcher: this.launcher });
  }

  current(appId: string): Instance | undefined {
    return this.table.of(appId)[0];
  }

  instancesOf(appId: string): Instance[] {
    return [...this.table.of(appId)];
  }

  /** The app's worker instances (a range of workers of its own); none otherwise. */
  workerInstancesOf(appId: string): Instance[] {
    return this.workers.instancesOf(appId);
  }

  /**
   * After a switch to `release` (a deployment, a restart, a rollback): with a range of workers,
   * the release's worker instances start and the previous ones stop (worker-pool.ts).
   */
  replaceWorkers(app: AppRow, release: ReleaseSpec, log: (line: string) => void): Promise<void> {
    return this.workers.replace(app, release, log);
  }

  /** Brings the app's worker instances to the count stored for it (the autoscaler's, a person's `--workers`). */
  scaleWorkers(app: AppRow, log: (line: string) => void): Promise<void> {
    return this.workers.scale(app, log);
  }

  routingTable(): RoutingTable {
    return this.table.routingTable();
  }

  /** Called after each routing table applied (the certificates follow the hosts). */
  onRoutesApplied(listener: () => void): void {
    this.table.onRoutesApplied(listener);
  }

  applyRoutes(): Promise<void> {
    return this.table.applyRoutes();
  }

  /**
   * The complete environment of one process of a release (an instance, a run hook), in a
   * sandbox of `memoryBytes`.
   */
  environmentFor(
    app: AppRow,
    release: ReleaseSpec,
    instanceId: string,
    instanceNumber: number,
    memoryBytes: number,
  ): Record<string, string> {
    return this.launcher.environmentFor(app, release, instanceId, instanceNumber, memoryBytes);
  }

  /**
   * Starts the app's instances of a release (as many as its scale says) and health-checks them
   * all; resolves with healthy instances (not yet serving) or throws after stopping them.
   */
  async launchAll(app: AppRow, release: ReleaseSpec, deploymentLog: (line: string) => void, cancel?: AbortSignal): Promise<Instance[]> {
    const numbers = Array.from({ length: storedInstanceCount(this.options.store, app.id) }, (_, n) => n);
    const { healthy, failure } = await this.launcher.launchNumbered(app, release, deploymentLog, numbers, cancel);
    if (failure) {
      await Promise.all(healthy.map((i) => i.stop(5000).catch(() => undefined)));
      throw failure.reason;
    }
    return healthy;
  }

  private instanceStateChanged(appId: string, instanceId: string, state: InstanceState): void {
    if (state === 'restarting') this.options.onInstanceRestart?.(appId);
    this.table.followState(appId, instanceId);
  }

  /**
   * Makes a healthy instance the one serving the app. Resolves as soon as the router sends
   * the app's requests to it; the previous instance drains and stops afterwards, off the
   * deployment's critical path (it still gets its drain period, then SIGTERM and a grace).
   */
  async promote(appId: string, instances: Instance | Instance[]): Promise<void> {
    const next = Array.isArray(instances) ? instances : [instances];
    const previous = this.table.of(appId).filter((i) => !next.includes(i));
    this.table.serve(appId, next);
    await this.applyRoutes();
    this.table.drainInBackground(appId, previous);
  }

  /** Whether the app's switches hand an exclusive volume over (`handOver`) instead of `launchAll` then `promote`. */
  handsOver(appId: string): boolean {
    return this.options.hasExclusiveVolume?.(appId) ?? false;
  }

  /**
   * The switch of an app with an exclusive volume, in place of `launchAll` then `promote`: the
   * router holds its requests while the old instance stops and `start` starts the new one on the
   * volume; resolves once the new one serves. On a failure the previous release serves again
   * and this throws (exclusive-handover.ts).
   */
  handOver(app: AppRow, start: () => Promise<Instance[]>, log: (line: string) => void): Promise<Instance[]> {
    return this.handover.handOver(app, start, log);
  }

  /** docs/behaviour.md, Liveness: every serving instance (adopted ones too) is checked from now on. */
  startLivenessMonitor(options: Pick<LivenessMonitorOptions, 'onReplaced' | 'tickMs' | 'bootGraceMs' | 'replacementBackoff'> = {}): void {
    const { store, logs, log } = this.options;
    this.liveness ??= new LivenessMonitor({ table: this.table, replacer: this.replacement, store, logs, log, ...options });
    this.liveness.start();
  }

  /**
   * Stops the checks and waits for stuck instances being stopped: left running when the daemon
   * lets go of its instances, one could be adopted by the next daemon in its replacement's place.
   */
  async stopLivenessMonitor(): Promise<void> {
    await this.liveness?.stop();
    await this.replacement.stuckStopped();
  }

  /** Whether the instance is being replaced, or replaced a stuck one (`slipway status`). */
  livenessOf(instance: Instance): LivenessNote | undefined {
    return this.liveness?.noteOf(instance);
  }

  /** Resolves once every instance replaced by a switch has stopped (tests, shutdown). */
  async drained(): Promise<void> {
    await this.table.drained();
  }

  /** Stops the app's instances (and their workers), each given `graceMs` between SIGTERM and SIGKILL. */
  async stop(appId: string, graceMs = 10_000): Promise<boolean> {
    const instances = this.table.forget(appId);
    await this.applyRoutes();
    const [, workers] = await Promise.all([Promise.all(instances.map((i) => i.stop(graceMs))), this.workers.stop(appId, graceMs)]);
    return instances.length > 0 || workers;
  }

  /**
   * The app is being deleted: a liveness replacement under way is cancelled, its instances stop
   * (SIGKILL after `graceMs`), and the old ones still draining after a switch or being replaced
   * are waited for. Resolves once none of its instances runs.
   */
  async end(appId: string, graceMs: number): Promise<void> {
    await this.liveness?.endApp(appId);
    await this.stop(appId, graceMs);
    await Promise.all([this.table.drained(appId), this.workers.end(appId, graceMs)]);
  }

  /**
   * At daemon start: adopts what an earlier daemon left running and starts what is missing
   * (restore.ts). The router keeps its table until the adopted instances are in this daemon's.
   */
  async restoreAll(): Promise<void> {
    const { store, logs, backend, log } = this.options;
    const holds = this.options.sleepHolds;
    await restoreReleases({
      store,
      logs,
      backend,
      log,
      table: this.table,
      launcher: this.launcher,
      workers: this.workers,
      ...(holds ? { sleep: (appId: string) => holds.sleep(appId) } : {}),
    });
  }

  /** The daemon lets go of the instances, which go on serving; the next daemon adopts them. */
  async detach(): Promise<void> {
    this.table.clear();
    this.workers.clear();
    await this.options.backend.detach();
  }

  /** `slipway system stop`: every instance drains and stops. */
  async shutdown(): Promise<void> {
    this.table.clear();
    this.workers.clear();
    await Promise.all([this.drained(), this.workers.drained()]);
    await this.options.backend.stopAll(10_000);
  }
}
