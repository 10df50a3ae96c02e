import type { Store } from '../store/store.js';
import type { AppRow } from '../store/apps.js';
import type { Instance, InstanceBackend, InstanceState } from '../instances/backend.js';
import type { Router, RoutingTable } from '../router/router.js';
import type { LogHub } from '../logs/log-hub.js';
import type { ReleaseSpec } from './release-spec.js';
import { parseReleaseSpec } from './release-spec.js';
import type { SandboxPolicy } from '../sandbox/sandbox-identity.js';
import type { Provider } from '../providers/plan.js';
import { LivenessMonitor, type LivenessMonitorOptions, type LivenessNote } from './liveness-monitor.js';
import { restoreReleases } from './restore.js';
import { ServingTable } from './serving-table.js';
import { InstanceLauncher } from './instance-launch.js';
import { InstanceReplacement } from './instance-replacement.js';
import { ExclusiveHandover, type RequestHolds } from './exclusive-handover.js';
import { WorkerPool } from './worker-pool.js';
import { Turns } from './turns.js';

export interface AppRuntimeOptions {
  store: Store;
  backend: InstanceBackend;
  sandboxes: SandboxPolicy;
  router: Router;
  logs: LogHub;
  domain: string;
  /** Where instances see the host (add-ons, the router's source address). */
  gatewayAddress: string;
  /** The operator's `--trusted-proxy` ranges, told to the app in CC_REVERSE_PROXY_IPS. */
  trustedProxies?: readonly string[];
  /** Every variable an app receives: its own, its add-ons', its linked apps'. */
  appEnv(appId: string): Record<string, string>;
  /** The runtimes, for what a release's processes get from their sandbox's memory. */
  providers?: ReadonlyMap<string, Provider>;
  log(line: string): void;
  /** How long a new instance may take to answer its first request. */
  bootDeadlineMs?: number;
  /** Pause between switching the router and stopping the old instance. */
  drainDelayMs?: number;
  /** How long a path that answered may take to turn 200 (the health check's warm-up window). */
  healthCheckSettleMs?: number;
  /** Told each time a crashed instance of an app is restarted by its supervisor. */
  onInstanceRestart?(appId: string): void;
  /** Whether the app has an exclusive volume: its switches hand the volume over (exclusive-handover.ts). */
  hasExclusiveVolume?(appId: string): boolean;
  /** The router's holds of an app's requests, for those handovers. */
  holds?: RequestHolds;
  /** The router's holds of a sleeping app's requests (scale to zero); absent: apps never sleep. */
  sleepHolds?: SleepHolds;
}

/** What scale to zero asks of the router: hold a sleeping app's requests until it wakes. */
export interface SleepHolds {
  sleep(appId: string): Promise<void>;
  wake(appId: string): Promise<void>;
  /** The sleeping apps a request waits for now; undefined when the router cannot tell. */
  wakeRequests(): Promise<Set<string> | undefined>;
}

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
  /** The scale under way for each app, the next one chained after it. */
  private readonly scaling = new Turns();

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
    const count = Math.max(1, this.options.store.apps.byId(app.id)?.instances ?? 1);
    const started = await Promise.allSettled(Array.from({ length: count }, (_, n) => this.launch(app, release, deploymentLog, cancel, n)));
    const healthy = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      await Promise.all(healthy.map((i) => i.stop(5000).catch(() => undefined)));
      throw failed.reason;
    }
    return healthy;
  }

  private instanceStateChanged(appId: string, instanceId: string, state: InstanceState): void {
    if (state === 'restarting') this.options.onInstanceRestart?.(appId);
    this.table.followState(appId, instanceId);
  }

  /**
   * Starts an instance of a release and health-checks it. Resolves with a healthy instance
   * (not yet serving) or throws a PhaseError after stopping it.
   */
  launch(
    app: AppRow,
    release: ReleaseSpec,
    deploymentLog: (line: string) => void,
    cancel?: AbortSignal,
    instanceNumber = 0,
  ): Promise<Instance> {
    return this.launcher.launch(app, release, deploymentLog, cancel, instanceNumber);
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

  /**
   * Changes how many instances serve the app's current release: new ones start, pass their
   * health check and join the routing table; removed ones (the highest numbers) leave it first,
   * then drain and stop. The count is the one stored for the app. Calls for one app run one after
   * the other (a person's scale and the autoscaler's may meet): each reads the count and the
   * table as the one before left them, so two scale-ups never both start the missing instances.
   */
  scale(app: AppRow, log: (line: string) => void): Promise<void> {
    return this.inTurn(app.id, () => this.scaleNow(app, log));
  }

  /** Runs `work` after the scale, sleep or wake of the app under way. */
  private inTurn(appId: string, work: () => Promise<void>): Promise<void> {
    return this.scaling.run(appId, work);
  }

  /** Whether apps can sleep here (the router holds a sleeping app's requests). */
  canSleep(): boolean {
    return this.options.sleepHolds !== undefined;
  }

  /** The sleeping apps a request waits for at the router now. */
  wakeRequests(): Promise<Set<string> | undefined> {
    return this.options.sleepHolds?.wakeRequests() ?? Promise.resolve(undefined);
  }

  /**
   * Scale to zero: the app's new requests are held at the router first (they will wake it), then
   * its instances leave the routing table and drain (requests in flight finish) and stop. The
   * caller records the sleep.
   */
  sleep(appId: string): Promise<void> {
    return this.inTurn(appId, async () => {
      const holds = this.options.sleepHolds;
      if (!holds) throw new Error('this router cannot hold requests, so apps cannot sleep');
      await holds.sleep(appId);
      const instances = this.table.of(appId);
      this.table.serve(appId, []);
      await this.applyRoutes();
      this.table.drainInBackground(appId, instances);
    });
  }

  /**
   * Wakes a sleeping app: the stored count of its current release's instances start and pass
   * their health check, join the routing table, and then the router lets the held requests go
   * on to them. Throws (the app stays asleep and held) when none could start.
   */
  wake(app: AppRow, log: (line: string) => void): Promise<void> {
    return this.inTurn(app.id, async () => {
      const record = this.options.store.deployments.release(app.id);
      if (record && record.wanted === 'running' && this.table.of(app.id).length === 0) {
        // An exclusive volume has one writer at a time: the instance the sleep stopped is gone first.
        if (this.options.hasExclusiveVolume?.(app.id)) await this.table.drained(app.id);
        const wanted = Math.max(1, this.options.store.apps.byId(app.id)?.instances ?? 1);
        const release = parseReleaseSpec(record.start_json);
        const started = await Promise.allSettled(Array.from({ length: wanted }, (_, n) => this.launch(app, release, log, undefined, n)));
        const healthy = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
        if (healthy.length === 0) throw (started[0] as PromiseRejectedResult).reason;
        this.table.serve(app.id, healthy);
        await this.applyRoutes();
      }
      await this.options.sleepHolds?.wake(app.id);
    });
  }

  private async scaleNow(app: AppRow, log: (line: string) => void): Promise<void> {
    const wanted = Math.max(1, this.options.store.apps.byId(app.id)?.instances ?? 1);
    const current = this.table.of(app.id);
    const record = this.options.store.deployments.release(app.id);
    if (current.length === 0 || !record || record.wanted !== 'running') return;
    if (wanted > current.length) {
      const release = parseReleaseSpec(record.start_json);
      const started = await Promise.allSettled(
        Array.from({ length: wanted - current.length }, (_, k) => this.launch(app, release, log, undefined, current.length + k)),
      );
      // The healthy ones serve even when another failed (it stopped itself): none is left
      // running outside the table, and a retry starts only what is still missing.
      const added = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      // Read again: an instance replaced meanwhile (liveness) keeps its replacement.
      this.table.serve(app.id, [...(this.table.has(app.id) ? this.table.of(app.id) : current), ...added]);
      await this.applyRoutes();
      const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    } else if (wanted < current.length) {
      this.table.serve(app.id, current.slice(0, wanted));
      await this.applyRoutes();
      this.table.drainInBackground(app.id, current.slice(wanted));
    }
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
