import type { Store } from '../store/store.js';
import type { AppRow } from '../store/apps.js';
import type { PlatformEvents } from '../core/platform-events.js';
import type { Sandbox } from '../sandbox/sandbox-host.js';
import { parseReleaseSpec } from '../serving/release-spec.js';
import { CronScheduler } from '../cron/cron-scheduler.js';

/**
 * The cron scheduler, wired to the store's serving releases and to one-off runs (the same path
 * as `slipway run`: a fresh sandbox of the release on this machine, or a task with the swarm
 * backend).
 */
export function makeCronScheduler(o: {
  store: Store;
  events: PlatformEvents;
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
