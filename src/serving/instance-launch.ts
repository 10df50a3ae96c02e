import type { AppRow } from '../store/apps.js';
import type { Instance, InstanceBackend, InstanceState, WorkerSpec } from '../instances/backend.js';
import type { LogHub } from '../logs/log-hub.js';
import { newId } from '../core/ids.js';
import { injectedEnv, composeEnv, withoutBuildOnlyVariables } from '../core/injected-env.js';
import type { ReleaseSpec } from './release-spec.js';
import { PhaseError } from '../core/phase-error.js';
import { healthCheckPaths } from '../healthcheck/health-check-paths.js';
import { runHealthCheck } from '../healthcheck/health-check.js';
import { livenessSettings } from '../healthcheck/liveness-settings.js';
import type { PlanError } from '../core/errors.js';
import type { SandboxPolicy } from '../sandbox/sandbox-identity.js';
import { workersFrom } from './workers.js';
import type { Provider } from '../providers/plan.js';

export interface InstanceLauncherOptions {
  backend: InstanceBackend;
  sandboxes: SandboxPolicy;
  logs: LogHub;
  /** Where instances see the host (add-ons, the router's source address). */
  gatewayAddress: string;
  /** The operator's `--trusted-proxy` ranges, told to the app in CC_REVERSE_PROXY_IPS. */
  trustedProxies?: readonly string[];
  /** Every variable an app receives: its own, its add-ons', its linked apps'. */
  appEnv(appId: string): Record<string, string>;
  /** The runtimes, for what a release's processes get from their sandbox's memory. */
  providers?: ReadonlyMap<string, Provider>;
  /** How long a new instance may take to answer its first request. */
  bootDeadlineMs?: number;
  /** How long a path that answered may take to turn 200 (the health check's warm-up window). */
  healthCheckSettleMs?: number;
  /** Whether the app's workers run in worker instances of their own (a range of workers): its web instances then run none. */
  workersApart?(appId: string): boolean;
  /** Told of each state change of an instance started or adopted (the serving table follows it). */
  onStateChange(appId: string, instanceId: string, state: InstanceState): void;
}

/**
 * Starts one instance of a release with its whole environment and health-checks it: what every
 * start of AppRuntime (a deployment, a scale, a liveness replacement, a restore) goes through.
 */
export class InstanceLauncher {
  /** The deployment log of each instance being launched, which gets its lines until it is healthy. */
  private readonly launching = new Map<string, (line: string) => void>();

  constructor(private readonly o: InstanceLauncherOptions) {}

  /** Tells a state change of an instance this daemon did not start (one it adopted). */
  stateChanged(appId: string, instanceId: string, state: InstanceState): void {
    this.o.onStateChange(appId, instanceId, state);
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
    const appVars = withoutBuildOnlyVariables(this.o.appEnv(app.id));
    const fromMemory = this.o.providers?.get(release.provider)?.runtimeEnv?.(memoryBytes, appVars) ?? {};
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
        reverseProxyIps: [this.o.gatewayAddress, ...(this.o.trustedProxies ?? [])],
      }),
      toolPath: release.toolPath,
      home: release.releaseDir,
    });
  }

  /**
   * Launches the instances numbered `numbers` at once. Resolves with the healthy ones and, when
   * any failed, the first failure (the failed ones stopped themselves): a caller puts the healthy
   * ones to use before it throws, so none is left running outside the serving table.
   */
  async launchNumbered(
    app: AppRow,
    release: ReleaseSpec,
    log: (line: string) => void,
    numbers: readonly number[],
    cancel?: AbortSignal,
  ): Promise<{ healthy: Instance[]; failure?: { reason: unknown } }> {
    const started = await Promise.allSettled(numbers.map((n) => this.launch(app, release, log, cancel, n)));
    const healthy = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    return failed ? { healthy, failure: { reason: failed.reason } } : { healthy };
  }

  /**
   * Starts an instance of a release and health-checks it. Resolves with a healthy instance
   * (not yet serving) or throws a PhaseError after stopping it.
   */
  async launch(
    app: AppRow,
    release: ReleaseSpec,
    deploymentLog: (line: string) => void,
    cancel: AbortSignal | undefined,
    instanceNumber: number,
  ): Promise<Instance> {
    const instanceId = newId('instance');
    const appVars = this.o.appEnv(app.id);
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
    // With a range of their own, the workers run in the app's worker instances (worker-pool.ts).
    if (this.o.workersApart?.(app.id)) workers = [];
    this.launching.set(instanceId, deploymentLog);
    const { logs } = this.o;
    let instance: Instance;
    try {
      const sandbox = await this.o.sandboxes.instance(app);
      instance = await this.o.backend.start({
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
        onStateChange: (state) => this.stateChanged(app.id, instanceId, state),
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
        bootDeadlineMs: this.o.bootDeadlineMs ?? 120_000,
        settleMs: this.o.healthCheckSettleMs,
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
}
