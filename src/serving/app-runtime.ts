import type { Store } from '../store/store.js';
import type { AppRow } from '../store/apps.js';
import type { Instance, InstanceBackend, InstanceState } from '../instances/backend.js';
import type { Router, RoutingTable } from '../router/router.js';
import { buildRoutingTable } from '../domains/routing-table.js';
import type { LogHub } from '../logs/log-hub.js';
import { newId } from '../core/ids.js';
import { injectedEnv, composeEnv, withoutBuildOnlyVariables } from '../core/injected-env.js';
import type { ReleaseSpec } from './release-spec.js';
import { parseReleaseSpec } from './release-spec.js';
import { PhaseError } from '../core/phase-error.js';
import { healthCheckPaths } from '../healthcheck/health-check-paths.js';
import { runHealthCheck } from '../healthcheck/health-check.js';
import { livenessSettings } from '../healthcheck/liveness-settings.js';
import type { PlanError } from '../core/errors.js';
import type { SandboxPolicy } from '../sandbox/sandbox-identity.js';
import { workersFrom } from './workers.js';
import type { WorkerSpec } from '../instances/backend.js';
import type { Provider } from '../providers/plan.js';
import { LivenessMonitor, type LivenessMonitorOptions, type LivenessNote } from './liveness-monitor.js';
import { restoreReleases } from './restore.js';

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
}

/**
 * Owns the instances that serve each app and the routing table: new instances replace the old
 * ones only after every one of them passed its health check; then the router switches and the
 * old ones drain. An instance that crashed leaves the routing table until it runs again.
 */
export class AppRuntime {
  /** The instances serving each app, by instance number. */
  private readonly serving = new Map<string, Instance[]>();
  private routesPending: Promise<void> | undefined;
  private readonly launching = new Map<string, (line: string) => void>();
  /** Old instances draining after a switch, and the app of each: shutdown and an app's deletion wait for them. */
  private readonly draining = new Map<Promise<void>, string>();

  /** Whether restoreAll has run: before, the router's table is the previous daemon's. */
  private restored = false;

  constructor(private readonly options: AppRuntimeOptions) {}

  current(appId: string): Instance | undefined {
    return this.serving.get(appId)?.[0];
  }

  instancesOf(appId: string): Instance[] {
    return [...(this.serving.get(appId) ?? [])];
  }

  routingTable(): RoutingTable {
    return buildRoutingTable(this.options.store, this.options.domain, (appId) =>
      (this.serving.get(appId) ?? [])
        .filter((i) => i.state() === 'running' && !this.withdrawn.has(i))
        .map((i) => ({ address: i.address, port: i.port })),
    );
  }

  private readonly routesListeners = new Set<() => void>();

  /** Called after each routing table applied (the certificates follow the hosts). */
  onRoutesApplied(listener: () => void): void {
    this.routesListeners.add(listener);
  }

  async applyRoutes(): Promise<void> {
    // Until restoreAll has adopted what runs, the router keeps the table the last daemon gave it:
    // a table from this daemon's empty view would take every app out of it.
    if (!this.restored) return;
    await this.options.router.apply(this.routingTable());
    for (const listener of this.routesListeners) listener();
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
    const appVars = withoutBuildOnlyVariables(this.options.appEnv(app.id));
    const fromMemory = this.options.providers?.get(release.provider)?.runtimeEnv?.(memoryBytes, appVars) ?? {};
    return composeEnv({
      // CC_SSH_PRIVATE_KEY is for the build only (build-ssh-key.ts): the instance never sees it.
      app: appVars,
      plan: { ...release.planEnv, ...fromMemory },
      injected: injectedEnv({
        appId: app.id,
        appName: app.name,
        deploymentId: release.deploymentId,
        commit: release.commit,
        instanceId,
        instanceNumber,
        instanceType: 'production',
        appHome: release.releaseDir,
        reverseProxyIps: [this.options.gatewayAddress, ...(this.options.trustedProxies ?? [])],
      }),
      toolPath: release.toolPath,
      home: release.releaseDir,
    });
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

  /** An instance's routes follow its health: leaving the table when it crashes, back when it runs. */
  private onInstanceState(appId: string, instanceId: string): void {
    if (!(this.serving.get(appId) ?? []).some((i) => i.id === instanceId)) return;
    this.routesPending ??= Promise.resolve().then(async () => {
      this.routesPending = undefined;
      await this.applyRoutes().catch((e) => this.options.log(`Routing after a state change of ${appId}: ${(e as Error).message}`));
    });
  }

  private instanceStateChanged(appId: string, instanceId: string, state: InstanceState): void {
    if (state === 'restarting') this.options.onInstanceRestart?.(appId);
    this.onInstanceState(appId, instanceId);
  }

  /**
   * Starts an instance of a release and health-checks it. Resolves with a healthy instance
   * (not yet serving) or throws a PhaseError after stopping it.
   */
  async launch(
    app: AppRow,
    release: ReleaseSpec,
    deploymentLog: (line: string) => void,
    cancel?: AbortSignal,
    instanceNumber = 0,
  ): Promise<Instance> {
    const instanceId = newId('instance');
    const appVars = this.options.appEnv(app.id);
    let paths: string[];
    try {
      paths = healthCheckPaths(appVars);
      // Read by the liveness monitor once the instance serves: a malformed value fails the deployment now.
      livenessSettings(appVars);
    } catch (error) {
      throw new PhaseError('healthcheck', (error as PlanError).message, (error as PlanError).hint);
    }
    let workers: WorkerSpec[];
    try {
      workers = workersFrom(appVars);
    } catch (error) {
      throw new PhaseError('run', (error as PlanError).message, (error as PlanError).hint);
    }
    this.launching.set(instanceId, deploymentLog);
    const { logs } = this.options;
    let instance: Instance;
    try {
      const sandbox = await this.options.sandboxes.instance(app);
      instance = await this.options.backend.start({
        sandbox,
        appId: app.id,
        deploymentId: release.deploymentId,
        instanceId,
        instanceNumber,
        releaseDir: release.releaseDir,
        ...(release.preRunLayer === undefined ? {} : { preRunLayer: release.preRunLayer }),
        beforeStart: release.beforeStart,
        command: release.start,
        workers,
        env: this.environmentFor(app, release, instanceId, instanceNumber, sandbox.limits.memoryBytes),
        onLog: (stream, line) => {
          logs.append(app.id, stream, line, instanceId);
          this.launching.get(instanceId)?.(stream === 'system' ? `[instance] ${line}` : line);
        },
        onStateChange: (state) => this.instanceStateChanged(app.id, instanceId, state),
      });
    } catch (error) {
      this.launching.delete(instanceId);
      throw new PhaseError('run', `The instance could not start: ${(error as Error).message}`);
    }
    deploymentLog(`Instance ${instanceId} started at ${instance.address}:${instance.port}; checking ${paths.join(', ')}`);
    try {
      const outcome = await runHealthCheck({
        address: instance.address,
        port: instance.port,
        paths,
        bootDeadlineMs: this.options.bootDeadlineMs ?? 120_000,
        settleMs: this.options.healthCheckSettleMs,
        giveUp: () =>
          cancel?.aborted
            ? 'the deployment was cancelled'
            : instance.state() === 'crashed' || instance.state() === 'restarting' || instance.restarts() > 0
              ? 'the application exited before answering; its output is above'
              : undefined,
        log: deploymentLog,
      });
      if (!outcome.ok) {
        throw new PhaseError('healthcheck', outcome.reason ? `Health check failed: ${outcome.reason}.` : 'Health check failed.');
      }
      return instance;
    } catch (error) {
      await instance.stop(5000).catch(() => undefined);
      throw error;
    } finally {
      this.launching.delete(instanceId);
    }
  }

  /**
   * Makes a healthy instance the one serving the app. Resolves as soon as the router sends
   * the app's requests to it; the previous instance drains and stops afterwards, off the
   * deployment's critical path (it still gets its drain period, then SIGTERM and a grace).
   */
  async promote(appId: string, instances: Instance | Instance[]): Promise<void> {
    const next = Array.isArray(instances) ? instances : [instances];
    const previous = (this.serving.get(appId) ?? []).filter((i) => !next.includes(i));
    this.serving.set(appId, next);
    await this.applyRoutes();
    this.drainInBackground(appId, previous);
  }

  private drainInBackground(appId: string, instances: Instance[]): void {
    if (instances.length === 0) return;
    const drain = (async () => {
      // The router's old workers finish requests in flight before the old instances are asked to stop.
      await new Promise((resolve) => setTimeout(resolve, this.options.drainDelayMs ?? 2000));
      await Promise.all(instances.map((i) => i.stop(10_000)));
    })().catch((error) => this.options.log(`Stopping a previous instance of ${appId}: ${(error as Error).message}`));
    this.draining.set(drain, appId);
    void drain.finally(() => this.draining.delete(drain));
  }

  /**
   * Changes how many instances serve the app's current release: new ones start, pass their
   * health check and join the routing table; removed ones (the highest numbers) leave it first,
   * then drain and stop. The count is the one stored for the app.
   */
  async scale(app: AppRow, log: (line: string) => void): Promise<void> {
    const wanted = Math.max(1, this.options.store.apps.byId(app.id)?.instances ?? 1);
    const current = this.serving.get(app.id) ?? [];
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
      this.serving.set(app.id, [...(this.serving.get(app.id) ?? current), ...added]);
      await this.applyRoutes();
      const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    } else if (wanted < current.length) {
      this.serving.set(app.id, current.slice(0, wanted));
      await this.applyRoutes();
      this.drainInBackground(app.id, current.slice(wanted));
    }
  }

  /** Serving instances out of the routing table because they stopped answering, until replaced. */
  private readonly withdrawn = new WeakSet<Instance>();
  private liveness: LivenessMonitor | undefined;
  /** Stuck instances replaced and being stopped (SIGTERM, then SIGKILL). */
  private readonly stoppingStuck = new Set<Promise<void>>();

  /** docs/behaviour.md, Liveness: every serving instance (adopted ones too) is checked from now on. */
  startLivenessMonitor(options: Pick<LivenessMonitorOptions, 'onReplaced' | 'tickMs' | 'bootGraceMs' | 'replacementBackoff'> = {}): void {
    this.liveness ??= new LivenessMonitor({
      host: {
        servingInstances: () => [...this.serving.entries()],
        withdraw: async (appId, instance) => {
          if (!(this.serving.get(appId) ?? []).includes(instance)) return;
          this.withdrawn.add(instance);
          await this.applyRoutes();
        },
        replaceInstance: (app, stuck, log, cancel) => this.replaceInstance(app, stuck, log, cancel),
      },
      store: this.options.store,
      logs: this.options.logs,
      log: this.options.log,
      ...options,
    });
    this.liveness.start();
  }

  /**
   * Stops the checks and waits for stuck instances being stopped: left running when the daemon
   * lets go of its instances, one could be adopted by the next daemon in its replacement's place.
   */
  async stopLivenessMonitor(): Promise<void> {
    await this.liveness?.stop();
    await Promise.all([...this.stoppingStuck]);
  }

  /** Whether the instance is being replaced, or replaced a stuck one (`slipway status`). */
  livenessOf(instance: Instance): LivenessNote | undefined {
    return this.liveness?.noteOf(instance);
  }

  /**
   * Puts a new instance of the same number and release in the place of one that stopped
   * answering: it must pass the health check first; then the router switches to it and the
   * stuck one gets SIGTERM, then SIGKILL. Undefined when the stuck one left service meanwhile
   * (stopped, scaled down, redeployed): the new one is stopped then. Throws when it failed.
   */
  async replaceInstance(app: AppRow, stuck: Instance, log: (line: string) => void, cancel?: AbortSignal): Promise<Instance | undefined> {
    const serves = () => (this.serving.get(app.id) ?? []).includes(stuck);
    const record = this.options.store.deployments.release(app.id);
    if (!serves() || !record || record.wanted !== 'running') return undefined;
    const release = parseReleaseSpec(record.start_json);
    // A deployment is switching (its record comes right after the router): the next try sees it done.
    if (release.deploymentId !== stuck.spec.deploymentId) throw new Error('A deployment of the application is switching its instances.');
    const fresh = await this.launch(app, release, log, cancel, stuck.spec.instanceNumber);
    if (!serves() || cancel?.aborted) {
      await fresh.stop(5000).catch(() => undefined);
      return undefined;
    }
    this.serving.set(
      app.id,
      (this.serving.get(app.id) ?? []).map((i) => (i === stuck ? fresh : i)),
    );
    await this.applyRoutes();
    log(`Instance ${fresh.id} serves in the place of ${stuck.id}, which is stopped (SIGTERM, then SIGKILL after 5 s)`);
    // Off the replacement's path: a stuck event loop ignores SIGTERM, so this usually takes the whole grace.
    const stopping = stuck
      .stop(5000)
      .catch((error) => this.options.log(`Stopping the stuck instance ${stuck.id}: ${(error as Error).message}`));
    this.draining.set(stopping, app.id);
    this.stoppingStuck.add(stopping);
    void stopping.finally(() => {
      this.draining.delete(stopping);
      this.stoppingStuck.delete(stopping);
    });
    return fresh;
  }

  /** Resolves once every instance replaced by a switch has stopped (tests, shutdown). */
  async drained(): Promise<void> {
    await Promise.all([...this.draining.keys()]);
  }

  /** Stops the app's instances (and their workers), each given `graceMs` between SIGTERM and SIGKILL. */
  async stop(appId: string, graceMs = 10_000): Promise<boolean> {
    const instances = this.serving.get(appId) ?? [];
    this.serving.delete(appId);
    await this.applyRoutes();
    if (instances.length === 0) return false;
    await Promise.all(instances.map((i) => i.stop(graceMs)));
    return true;
  }

  /**
   * The app is being deleted: a liveness replacement under way is cancelled, its instances stop
   * (SIGKILL after `graceMs`), and the old ones still draining after a switch or being replaced
   * are waited for. Resolves once none of its instances runs.
   */
  async end(appId: string, graceMs: number): Promise<void> {
    await this.liveness?.endApp(appId);
    await this.stop(appId, graceMs);
    await Promise.all([...this.draining].filter(([, app]) => app === appId).map(([drain]) => drain));
  }

  /**
   * At daemon start: adopts what an earlier daemon left running and starts what is missing
   * (restore.ts). The router keeps its table until the adopted instances are in this daemon's.
   */
  async restoreAll(): Promise<void> {
    await restoreReleases({
      store: this.options.store,
      logs: this.options.logs,
      backend: this.options.backend,
      log: this.options.log,
      host: {
        servingOf: (appId) => this.serving.get(appId) ?? [],
        serve: (appId, instances) => this.serving.set(appId, instances),
        launch: (app, release, log, cancel, n) => this.launch(app, release, log, cancel, n),
        drainInBackground: (appId, instances) => this.drainInBackground(appId, instances),
        instanceStateChanged: (appId, instanceId, state) => this.instanceStateChanged(appId, instanceId, state),
        takeOverRoutes: async () => {
          this.restored = true;
          await this.applyRoutes();
        },
        applyRoutes: () => this.applyRoutes(),
      },
    });
  }

  /** The daemon lets go of the instances, which go on serving; the next daemon adopts them. */
  async detach(): Promise<void> {
    this.serving.clear();
    await this.options.backend.detach();
  }

  /** `slipway system stop`: every instance drains and stops. */
  async shutdown(): Promise<void> {
    this.serving.clear();
    await this.drained();
    await this.options.backend.stopAll(10_000);
  }
}
