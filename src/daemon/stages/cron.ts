import type { Store } from '../../store/store.js';
import type { AppRow } from '../../store/apps.js';
import type { PlatformEventPublisher } from '../../core/platform-events.js';
import type { Sandbox } from '../../sandbox/sandbox-host.js';
import { parseReleaseSpec } from '../../serving/release-spec.js';
import { CronScheduler } from '../../cron/cron-scheduler.js';
import type { LogHub } from '../../logs/log-hub.js';
import { startOneOff } from '../../serving/one-off.js';
import { OneOffRuns } from '../../serving/one-off-runs.js';
import type { DaemonBase, NetworkBuilt, SandboxesBuilt, Told } from './stage.js';
import type { serving } from './serving.js';

/**
 * The cron scheduler, wired to the store's serving releases and to one-off runs (the same path
 * as `slipway run`: a fresh sandbox of the release on this machine, or a task with the swarm
 * backend).
 */
export function makeCronScheduler(o: {
  store: Store;
  events: PlatformEventPublisher;
  appVars(appId: string): Record<string, string>;
  appLog(appId: string, stream: string, line: string): void;
  runOneOff(app: AppRow, argv: string[], onData: (stream: 'out' | 'err', chunk: Buffer) => void): Promise<Sandbox>;
  log(line: string): void;
}): CronScheduler {
  return new CronScheduler({
    store: o.store,
    events: o.events,
    appVars: o.appVars,
    appLog: o.appLog,
    log: o.log,
    startRun: (app, argv, onData) => o.runOneOff(app, argv, onData),
    releaseOf(appId) {
      const release = o.store.deployments.release(appId);
      if (!release) return undefined;
      const spec = parseReleaseSpec(release.start_json);
      return { releaseDir: spec.releaseDir, jobs: spec.cron ?? [], running: release.wanted === 'running' };
    },
  });
}

/** The cron jobs of an app's serving release (none before its first deployment): what its cron-jobs quota counts. */
export function cronJobsOfServingRelease(store: Store, appId: string): number {
  const release = store.deployments.release(appId);
  return release ? (parseReleaseSpec(release.start_json).cron?.length ?? 0) : 0;
}

/**
 * One-off commands (`slipway run` and cron runs) and the cron scheduler running each app's jobs
 * once per schedule, in one-off sandboxes of its release (docs/behaviour.md, Cron jobs); begun
 * by the resume stage. Needs: `store`, `logs`, `told`, the serving stage's `runtime`, `policy`
 * and `appEnv`, the sandboxes' `sandboxes` and `backend`, the network's `instances`. Provides:
 * `oneOffRuns` (every one-off command by app: an app's deletion ends them), `oneOffs`, `cron`.
 */
export function cron(
  needs: DaemonBase &
    Pick<ReturnType<typeof serving>, 'runtime' | 'policy' | 'appEnv'> &
    Pick<SandboxesBuilt, 'sandboxes' | 'backend'> &
    Pick<NetworkBuilt, 'instances'> & { store: Store; logs: LogHub; told: Told },
) {
  const { store, logs, told, runtime, policy, appEnv, sandboxes, backend, instances, stoppers, lifecycle, log } = needs;
  const oneOffRuns = new OneOffRuns();
  const oneOffs = { store, runtime, sandboxes: policy, sandboxHost: sandboxes, networks: backend, instances, runs: oneOffRuns };
  const cron = makeCronScheduler({
    store,
    events: told.events,
    appVars: appEnv,
    appLog: (appId, stream, line) => logs.append(appId, stream, line),
    runOneOff: (app, argv, onData) => startOneOff(oneOffs, app, argv, onData),
    log,
  });
  stoppers.control('cron jobs', () => cron.stop());
  // A deleted app's cron runs and one-off commands are killed and none starts any more, until
  // the deletion stops and the app stays.
  lifecycle.on('app ending', async ({ appId }) => {
    await cron.endRunsOf(appId);
    await oneOffRuns.endAll(appId);
  });
  lifecycle.on('app kept', ({ appId }) => {
    cron.resume(appId);
    oneOffRuns.reopen(appId);
  });
  return { oneOffRuns, oneOffs, cron };
}
