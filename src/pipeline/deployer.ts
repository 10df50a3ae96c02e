import { rm } from 'node:fs/promises';
import type { Store } from '../store/store.js';
import type { Deployment } from '../store/deployments.js';
import type { AppRow } from '../store/apps.js';
import type { RepoStore } from '../receiver/repo-store.js';
import type { Provider, VersionCatalog } from '../providers/plan.js';
import { FixableError } from '../core/errors.js';
import type { LogHub } from '../logs/log-hub.js';
import type { AppRuntime } from '../serving/app-runtime.js';
import { DeploymentCancelled, describeFailure } from '../core/phase-error.js';
import { makeRedactor, secretValues } from '../core/redact.js';
import type { ReleaseSpec } from '../serving/release-spec.js';
import type { BuildNetworks } from '../network/build-network.js';
import type { SandboxHost } from '../sandbox/sandbox-host.js';
import type { SandboxPolicy } from '../sandbox/sandbox-identity.js';
import { DeployLayout } from '../storage/deploy-layout.js';
import { DeployQueue, type Turn } from './deploy-queue.js';
import { type DeployRunner, sandboxRunner } from './deploy-runner.js';
import { receiveCommit } from './commit-export.js';
import { type BuildPhaseDeps, buildRelease } from './build-phase.js';
import { type ReleaseHookDeps, runOutcomeHook } from './release-hooks.js';
import { recordServingRelease, releaseBuild, reusedRelease } from './release-phase.js';
import { startRelease } from './run-phase.js';
import { pruneDeploymentLogs, pruneReleases } from './release-retention.js';
import { type PlanPreview, previewPlan } from './plan-preview.js';
import type { AppDisks } from '../storage/app-disks.js';
import type { DiskReserve } from '../storage/disk-reserve.js';
import { budgetFailure, makeRoomBeforeBuild } from './disk-budget.js';

export interface DeployerOptions {
  /** Told when a deployment starts (its end is the store's onFinished). */
  onStarted?(app: AppRow, deployment: Deployment): void;
  store: Store;
  repos: RepoStore;
  runtime: AppRuntime;
  logs: LogHub;
  providers: ReadonlyMap<string, Provider>;
  catalog: VersionCatalog;
  dataDir: string;
  toolchainCacheDir: string;
  /** Who the app's builds run as and with what limits. */
  sandboxes: SandboxPolicy;
  sandboxHost: SandboxHost;
  /** Runs the deployment's sandboxed steps (default: in runc sandboxes of sandboxHost). */
  runner?: DeployRunner;
  /** A network namespace of its own for each build (outbound access only). */
  buildNetworks: BuildNetworks;
  gatewayAddress: string;
  /** The operator's `--trusted-proxy` ranges, told to builds in CC_REVERSE_PROXY_IPS. */
  trustedProxies?: readonly string[];
  appEnv(appId: string): Record<string, string>;
  /** The machine's network settings for builds (proxies, certificate authorities, npm registry). */
  machineEnv: Record<string, string>;
  log(line: string): void;
  /** Refuses (throws) a release whose cron jobs would take the organisation past its cron-jobs quota; absent: not checked. */
  checkCronJobs?(app: AppRow, jobs: number): void;
  /** How many built releases of each app stay on disk, ready for a rollback. */
  keptReleases?: number;
  /** Told how long each build phase took and how it ended (the Prometheus build histogram). */
  onBuildFinished?(outcome: 'success' | 'failure', seconds: number): void;
  /** The free space builds leave on the platform's disks (`--min-free-disk`); absent: not checked (unit tests). */
  reserve?: DiskReserve;
  /** Each app's filesystem and its budget; absent: builds write to the data folder unbounded (unit tests). */
  disks?: AppDisks;
}

/**
 * `build`: export, build and start a commit; `reuse-release`: start a built release again
 * (restart, rollback), the serving one unless `releaseOf` names the deployment that built it.
 */
export type DeployMode = 'build' | 'reuse-release';

/**
 * Runs deployments one at a time per app (a push during a deployment waits its turn):
 * receive -> build -> release -> run -> health check -> switch. Any failure leaves the
 * release that was serving in place.
 */
export class Deployer {
  private readonly queue = new DeployQueue();
  private readonly layout: DeployLayout;
  private readonly runner: DeployRunner;
  private readonly buildDeps: BuildPhaseDeps;
  private readonly hookDeps: ReleaseHookDeps;

  constructor(private readonly o: DeployerOptions) {
    this.layout = new DeployLayout(o.dataDir);
    // The host is asked for when a step runs: a Deployer that never builds needs none.
    this.runner = o.runner ?? sandboxRunner(() => o.sandboxHost);
    this.buildDeps = {
      runner: this.runner,
      layout: this.layout,
      providers: o.providers,
      catalog: o.catalog,
      toolchainCacheDir: o.toolchainCacheDir,
      buildNetworks: o.buildNetworks,
      gatewayAddress: o.gatewayAddress,
      trustedProxies: o.trustedProxies,
      machineEnv: o.machineEnv,
      checkCronJobs: o.checkCronJobs,
    };
    this.hookDeps = {
      runner: this.runner,
      sandboxes: o.sandboxes,
      buildNetworks: o.buildNetworks,
      runtime: o.runtime,
      layout: this.layout,
    };
  }

  enqueue(app: AppRow, input: { commit: string; cause: string; userId: string | null; mode: DeployMode; releaseOf?: string }): Deployment {
    const deployment = this.o.store.deployments.create({ appId: app.id, commit: input.commit, cause: input.cause, userId: input.userId });
    return this.add(app, deployment, input.mode, input.releaseOf);
  }

  /**
   * At daemon start: a deployment the last daemon had queued (it never started) takes its turn
   * again, under its own id, so the push that asked for it is not lost.
   */
  requeue(app: AppRow, deployment: Deployment, mode: DeployMode): Deployment {
    this.o.logs.append(deployment.id, 'system', '==> slipway restarted while this deployment waited its turn: it runs now.');
    return this.add(app, deployment, mode);
  }

  private add(app: AppRow, deployment: Deployment, mode: DeployMode, releaseOf?: string): Deployment {
    this.queue.add(app.id, deployment.id, (turn) => this.run(app, deployment, mode, releaseOf, turn));
    return deployment;
  }

  /**
   * Cancels the app's running deployment (its sandboxes are killed, the previous release keeps
   * serving, the state becomes CANCELLED) and, with `queuedToo`, the ones waiting their turn.
   * Returns the ids of the deployments cancelled.
   */
  cancel(appId: string, reason: string, queuedToo = false): string[] {
    return this.queue.cancel(appId, reason, queuedToo);
  }

  /** Daemon stop: every deployment running or waiting ends CANCELLED, and this waits for them. */
  async cancelAll(reason: string): Promise<void> {
    await this.queue.cancelAll(reason);
  }

  /** Whether a deployment of the app is running or waiting its turn. */
  busy(appId: string): boolean {
    return this.queue.busy(appId);
  }

  /** The plan a deployment of `commit` would make, printed as the deploy log would (`slipway plan`). */
  planCommit(app: AppRow, commit: string): Promise<PlanPreview> {
    return previewPlan(
      {
        runner: this.runner,
        layout: this.layout,
        providers: this.o.providers,
        catalog: this.o.catalog,
        toolchainCacheDir: this.o.toolchainCacheDir,
        sandboxes: this.o.sandboxes,
        repoOf: (appId) => this.o.repos.pathFor(appId),
        appEnv: this.o.appEnv,
      },
      app,
      commit,
    );
  }

  /** Resolves once every queued deployment has ended (tests and shutdown). */
  async idle(): Promise<void> {
    await this.queue.idle();
  }

  /**
   * One deployment, start to end: receive -> build -> release (or a release built earlier) ->
   * run -> health check and switch. Each phase is a call into its module; this keeps the log,
   * the record's phase and what a failure or a cancellation leaves behind.
   */
  private async run(app: AppRow, deployment: Deployment, mode: DeployMode, releaseOf: string | undefined, turn: Turn): Promise<void> {
    const { store, logs, runtime } = this.o;
    if (turn.cancelledBeforeStart !== undefined) {
      logs.append(deployment.id, 'system', `==> Deployment cancelled before it started: ${turn.cancelledBeforeStart}`);
      store.deployments.finish(deployment.id, 'CANCELLED', turn.cancelledBeforeStart);
      logs.finish(deployment.id);
      return;
    }
    const { signal } = turn;
    const cancelled = () => {
      if (signal.aborted) throw new DeploymentCancelled(String(signal.reason));
    };
    const started = Date.now();
    const appVars = this.o.appEnv(app.id);
    const redact = makeRedactor(secretValues(appVars));
    const log = (line: string, stream = 'system') => logs.append(deployment.id, stream, redact(line));
    const seconds = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
    let phase: Deployment['phase'] = 'receive';
    let releaseForHooks: ReleaseSpec | undefined;
    // The phase a failure is blamed on and the one the deployment record shows move together.
    const enter = (next: NonNullable<Deployment['phase']>) => {
      phase = next;
      store.deployments.setPhase(deployment.id, next);
    };
    logs.begin(deployment.id);
    try {
      log(`Deployment ${deployment.id} of ${app.name} (${app.id}), commit ${deployment.commit_sha}, cause: ${deployment.cause}`);
      this.o.onStarted?.(app, deployment);
      let release: ReleaseSpec;
      if (mode === 'reuse-release') {
        release = reusedRelease(store, { appId: app.id, deploymentId: deployment.id, releaseOf });
        log(`==> Reusing the release built for commit ${release.commit} (no build)`);
      } else {
        enter('receive');
        // Before anything is written: a build must not fill the host's disk.
        await this.o.reserve?.check('build');
        await makeRoomBeforeBuild({ disks: this.o.disks, store, layout: this.layout, appId: app.id, log });
        const sandbox = await this.o.sandboxes.build(app);
        const buildDir = this.layout.buildFolder(app.id);
        await receiveCommit(this.runner, { repo: this.o.repos.pathFor(app.id), buildDir, deployment, sandbox, signal });
        cancelled();
        log(`==> [receive] Commit ${deployment.commit_sha} exported without .git`);

        enter('build');
        const built = await this.timedBuild(buildRelease(this.buildDeps, { app, deployment, appVars, sandbox, log, signal }), signal);
        cancelled();
        log(`Build succeeded in ${seconds()}`);

        enter('release');
        release = await releaseBuild(this.runner, this.layout, { appId: app.id, built, user: sandbox.user });
        log(`==> [release] Release ready in ${release.releaseDir}`);
      }

      enter('run');
      log(`==> [run] Starting: ${release.start.join(' ')}`);
      // From here a failure that names no phase of its own is the health check's.
      phase = 'healthcheck';
      cancelled();
      releaseForHooks = release;
      const start = () =>
        startRelease(
          { ...this.hookDeps, runtime },
          {
            app,
            release,
            appVars,
            log,
            signal,
            // The release with what its CC_PRE_RUN_HOOK wrote: what is recorded, and what the outcome hooks see.
            onRelease: (withLayer) => (release = releaseForHooks = withLayer),
          },
        );
      if (runtime.handsOver(app.id)) {
        // An exclusive volume: the old instance stops before the new one (and its pre-run hook) starts on it.
        await runtime.handOver(app, start, log);
        store.deployments.setPhase(deployment.id, 'healthcheck');
      } else {
        const instances = await start();
        store.deployments.setPhase(deployment.id, 'healthcheck');
        await runtime.promote(app.id, instances);
      }
      recordServingRelease(store, app.id, release);
      // Workers with a range of their own: the new release's worker instances replace the old ones.
      // The web switch is done: one that could not start is told, and the autoscaler starts it again.
      await runtime
        .replaceWorkers(app, release, log)
        .catch((error: Error) =>
          log(`Warning: ${error.message}; the web instances serve, and the missing worker instance is started again`),
        );
      store.deployments.setPhase(deployment.id, 'done');
      store.deployments.finish(deployment.id, 'OK', null);
      log(`Successfully deployed in ${seconds()}`);
      await runOutcomeHook(this.hookDeps, { app, release, name: 'CC_RUN_SUCCEEDED_HOOK', appVars, log });
      await pruneReleases(store, this.layout, app.id, this.o.keptReleases);
    } catch (error) {
      if (signal.aborted) {
        const reason = String(signal.reason);
        log(`==> Deployment cancelled during the ${phase} phase: ${reason}`);
        if (runtime.current(app.id)) log('The previous release keeps serving.');
        store.deployments.finish(deployment.id, 'CANCELLED', reason);
        await rm(this.layout.buildFolder(app.id), { recursive: true, force: true });
        return;
      }
      // Read while the failed build's files are still there: a full filesystem names the budget.
      const at = phase as Deployment['phase'];
      const overBudget = at === 'receive' || at === 'build' || at === 'release' ? await budgetFailure(this.o.disks, app.id, at) : null;
      await rm(this.layout.buildFolder(app.id), { recursive: true, force: true });
      if (overBudget) {
        await pruneReleases(store, this.layout, app.id, 1).catch(() => undefined);
        log('Kept releases other than the serving one were removed, to give the next build room.');
      }
      const failure = describeFailure(overBudget ?? error, phase, redact);
      for (const line of failure.lines) log(line);
      if (!(error instanceof FixableError)) this.o.log(`Deployment ${deployment.id}: ${(error as Error).stack}`);
      if (runtime.current(app.id)) log('The previous release keeps serving.');
      log(`Deploy failed in ${seconds()}`);
      await runOutcomeHook(this.hookDeps, { app, release: releaseForHooks, name: 'CC_RUN_FAILED_HOOK', appVars, log });
      store.deployments.setPhase(deployment.id, failure.phase);
      store.deployments.finish(deployment.id, 'FAIL', `${failure.phase}: ${failure.message}`);
      await rm(this.layout.buildFolder(app.id), { recursive: true, force: true });
    } finally {
      logs.finish(deployment.id);
      pruneDeploymentLogs(store, logs, app.id, this.o.log);
    }
  }

  /** Tells onBuildFinished how long the build took and how it ended; a cancelled build says nothing about that. */
  private async timedBuild<T>(build: Promise<T>, signal: AbortSignal): Promise<T> {
    const started = performance.now();
    const took = () => (performance.now() - started) / 1000;
    try {
      const built = await build;
      this.o.onBuildFinished?.('success', took());
      return built;
    } catch (error) {
      if (!signal.aborted) this.o.onBuildFinished?.('failure', took());
      throw error;
    }
  }
}
