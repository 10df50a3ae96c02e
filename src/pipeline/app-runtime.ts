import type { Store } from '../store/store.js';
import type { AppRow } from '../store/apps.js';
import type { Instance, InstanceBackend } from '../instances/backend.js';
import type { Router, RoutingTable, Upstream } from '../router/router.js';
import type { LogHub } from './log-hub.js';
import { newId } from '../core/ids.js';
import { injectedEnv, composeEnv } from './injected-env.js';
import { withoutBuildOnlyVariables } from './build-ssh-key.js';
import type { ReleaseSpec } from './release-spec.js';
import { parseReleaseSpec } from './release-spec.js';
import { PhaseError } from './phase-error.js';
import { healthCheckPaths } from '../healthcheck/health-check-paths.js';
import { runHealthCheck } from '../healthcheck/health-check.js';
import { PlanError } from '../providers/plan.js';
import type { SandboxPolicy } from './sandbox-policy.js';

export interface AppRuntimeOptions {
  store: Store;
  backend: InstanceBackend;
  sandboxes: SandboxPolicy;
  router: Router;
  logs: LogHub;
  domain: string;
  /** Where instances see the host (add-ons, the router's source address). */
  gatewayAddress: string;
  /** Every variable an app receives: its own, its add-ons', its linked apps'. */
  appEnv(appId: string): Record<string, string>;
  log(line: string): void;
  /** How long a new instance may take to answer its first request. */
  bootDeadlineMs?: number;
  /** Pause between switching the router and stopping the old instance. */
  drainDelayMs?: number;
}

/**
 * Owns the instance that serves each app and the routing table: a new instance replaces the
 * old one only after its health check passed; then the router switches and the old one drains.
 */
export class AppRuntime {
  private readonly serving = new Map<string, Instance>();
  private readonly launching = new Map<string, (line: string) => void>();
  /** Old instances draining after a switch: shutdown waits for them. */
  private readonly draining = new Set<Promise<void>>();

  constructor(private readonly options: AppRuntimeOptions) {}

  current(appId: string): Instance | undefined {
    return this.serving.get(appId);
  }

  routingTable(): RoutingTable {
    const table = new Map<string, Upstream[]>();
    for (const app of this.options.store.apps.all()) {
      const instance = this.serving.get(app.id);
      table.set(`${app.id}.${this.options.domain}`, instance ? [{ address: instance.address, port: instance.port }] : []);
    }
    return table;
  }

  async applyRoutes(): Promise<void> {
    await this.options.router.apply(this.routingTable());
  }

  /**
   * Starts an instance of a release and health-checks it. Resolves with a healthy instance
   * (not yet serving) or throws a PhaseError after stopping it.
   */
  /** The complete environment of one process of a release (an instance, a run hook). */
  environmentFor(app: AppRow, release: ReleaseSpec, instanceId: string, instanceNumber: number): Record<string, string> {
    const appVars = this.options.appEnv(app.id);
    return composeEnv({
      // CC_SSH_PRIVATE_KEY is for the build only (build-ssh-key.ts): the instance never sees it.
      app: withoutBuildOnlyVariables(appVars),
      plan: release.planEnv,
      injected: injectedEnv({
        appId: app.id,
        appName: app.name,
        deploymentId: release.deploymentId,
        commit: release.commit,
        instanceId,
        instanceNumber,
        instanceType: 'production',
        appHome: release.releaseDir,
        reverseProxyIp: this.options.gatewayAddress,
      }),
      toolPath: release.toolPath,
      home: release.releaseDir,
    });
  }

  async launch(app: AppRow, release: ReleaseSpec, deploymentLog: (line: string) => void, cancel?: AbortSignal): Promise<Instance> {
    const instanceId = newId('instance');
    const appVars = this.options.appEnv(app.id);
    let paths: string[];
    try {
      paths = healthCheckPaths(appVars);
    } catch (error) {
      throw new PhaseError('healthcheck', (error as PlanError).message, (error as PlanError).hint);
    }
    const env = this.environmentFor(app, release, instanceId, 0);
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
        instanceNumber: 0,
        releaseDir: release.releaseDir,
        beforeStart: release.beforeStart,
        command: release.start,
        env,
        onLog: (stream, line) => {
          logs.append(app.id, stream, line);
          this.launching.get(instanceId)?.(stream === 'system' ? `[instance] ${line}` : line);
        },
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
  async promote(appId: string, instance: Instance): Promise<void> {
    const previous = this.serving.get(appId);
    this.serving.set(appId, instance);
    await this.applyRoutes();
    if (previous && previous !== instance) {
      const drain = (async () => {
        // The router's old workers finish requests in flight before the old instance is asked to stop.
        await new Promise((resolve) => setTimeout(resolve, this.options.drainDelayMs ?? 2000));
        await previous.stop(10_000);
      })().catch((error) => this.options.log(`Stopping the previous instance of ${appId}: ${(error as Error).message}`));
      this.draining.add(drain);
      void drain.finally(() => this.draining.delete(drain));
    }
  }

  /** Resolves once every instance replaced by a switch has stopped (tests, shutdown). */
  async drained(): Promise<void> {
    await Promise.all([...this.draining]);
  }

  async stop(appId: string): Promise<boolean> {
    const instance = this.serving.get(appId);
    this.serving.delete(appId);
    await this.applyRoutes();
    if (!instance) return false;
    await instance.stop(10_000);
    return true;
  }

  /** After a daemon restart: every app whose release should run serves again, without a rebuild. */
  async restoreAll(): Promise<void> {
    const { store } = this.options;
    await this.applyRoutes();
    for (const record of store.deployments.allReleases()) {
      if (record.wanted !== 'running') continue;
      const app = store.apps.byId(record.app_id);
      if (!app) continue;
      const log = (line: string) => this.options.logs.append(app.id, 'system', line);
      try {
        const release = parseReleaseSpec(record.start_json);
        log(`Restoring release ${release.deploymentId} (commit ${release.commit.slice(0, 12)}) after a daemon start`);
        const instance = await this.launch(app, release, log);
        await this.promote(app.id, instance);
        this.options.log(`Restored ${app.name} (${app.id}) from release ${release.deploymentId}`);
      } catch (error) {
        this.options.log(`Could not restore ${app.name} (${app.id}): ${(error as Error).message}`);
      }
    }
  }

  async shutdown(): Promise<void> {
    this.serving.clear();
    await this.drained();
    await this.options.backend.stopAll(10_000);
  }
}
