import type { Store } from '../store/store.js';
import type { AppRow } from '../store/apps.js';
import type { Instance, InstanceBackend } from '../instances/backend.js';
import type { LogHub } from '../logs/log-hub.js';
import type { SandboxPolicy } from '../sandbox/sandbox-identity.js';
import { newId } from '../core/ids.js';
import { PhaseError } from '../core/phase-error.js';
import { workerRangeOf } from '../core/scaling-ranges.js';
import { type ReleaseSpec, parseReleaseSpec } from './release-spec.js';
import { workersFrom } from './workers.js';
import type { InstanceLauncher } from './instance-launch.js';
import { Turns } from './turns.js';

/**
 * Worker instances are numbered from here (their INSTANCE_NUMBER is their place in the pool, from
 * 0): a web instance's number is under 40, so an instance found running at a daemon start tells
 * by its number alone which it is.
 */
export const WORKER_INSTANCE_BASE = 100;

/**
 * The main process of a worker instance: it only keeps the sandbox alive while the workers run
 * beside it (each in its own sandbox, under CC_WORKER_RESTART, as beside a web instance). It is
 * never routed nor health-checked, and it ends at SIGTERM (tini forwards it).
 */
export const KEEP_ALIVE = ['sleep', 'infinity'];

export function isWorkerInstance(instance: Pick<Instance, 'spec'>): boolean {
  return instance.spec.instanceNumber >= WORKER_INSTANCE_BASE;
}

export interface WorkerPoolOptions {
  store: Store;
  backend: InstanceBackend;
  sandboxes: SandboxPolicy;
  logs: LogHub;
  launcher: Pick<InstanceLauncher, 'environmentFor'>;
  /** Every variable an app receives: its own, its add-ons', its linked apps'. */
  appEnv(appId: string): Record<string, string>;
  log(line: string): void;
  /** SIGTERM, then this long before SIGKILL, for the worker instances a switch or a scale-in stops. */
  graceMs?: number;
}

/**
 * The worker instances of each app that has a range of workers (`slipway scale --min-workers 1
 * --max-workers 3`): sandboxes of its current release that run all its workers and nothing
 * routed. A deployment's switch replaces them (the new release's start, then the old ones stop),
 * the autoscaler and a person's scale change their count, and the app's stop and deletion end
 * them. Without a range an app has none: its workers run beside each web instance.
 */
export class WorkerPool {
  private readonly running = new Map<string, Instance[]>();
  /** The change under way for each app, the next one chained after it. */
  private readonly turns = new Turns();
  /** Worker instances being stopped, and the app of each: an app's deletion and shutdown wait for them. */
  private readonly stopping = new Map<Promise<void>, string>();

  constructor(private readonly o: WorkerPoolOptions) {}

  instancesOf(appId: string): Instance[] {
    return [...(this.running.get(appId) ?? [])];
  }

  /** Whether the app's workers run in worker instances rather than beside each web instance. */
  runsApart(appId: string): boolean {
    const app = this.o.store.apps.byId(appId);
    return app !== undefined && workerRangeOf(app) !== undefined;
  }

  /**
   * After a switch to `release` (a deployment, a restart, a rollback): the worker instances of the
   * new release start, then the old ones stop (SIGTERM, then the grace). An app without a range
   * keeps none (any left from before its range was dropped stop). A worker instance that cannot
   * start is a failure of the deployment's run phase; those that started run.
   */
  replace(app: AppRow, release: ReleaseSpec, log: (line: string) => void): Promise<void> {
    return this.inTurn(app.id, async () => {
      const old = this.instancesOf(app.id);
      const wanted = this.wantedCount(app.id);
      if (wanted > 0) log(`Starting ${wanted} worker instance${wanted === 1 ? '' : 's'} (the workers' range)`);
      const started = await Promise.allSettled(Array.from({ length: wanted }, (_, k) => this.startOne(app, release, k, log)));
      const ok = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      if (ok.length > 0 || wanted > 0) this.running.set(app.id, ok);
      else this.running.delete(app.id);
      this.stopInBackground(app.id, old);
      const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw new PhaseError('run', `A worker instance could not start: ${(failed.reason as Error).message}`);
    });
  }

  /**
   * Brings the app's worker instances to the count stored for it (the autoscaler's, a person's
   * `--workers`): new ones of its current release start, the highest numbers stop. Nothing while
   * the app has no worker instances running its release (stopped, or its range set since its last
   * deployment: they start with the next one).
   */
  scale(app: AppRow, log: (line: string) => void): Promise<void> {
    return this.inTurn(app.id, async () => {
      const current = this.instancesOf(app.id);
      const record = this.o.store.deployments.release(app.id);
      if (!this.running.has(app.id) || !record || record.wanted !== 'running') return;
      const wanted = this.wantedCount(app.id);
      if (wanted > current.length) {
        const release = parseReleaseSpec(record.start_json);
        const taken = new Set(current.map((i) => i.spec.instanceNumber - WORKER_INSTANCE_BASE));
        const free = Array.from({ length: wanted }, (_, k) => k).filter((k) => !taken.has(k));
        const started = await Promise.allSettled(free.slice(0, wanted - current.length).map((k) => this.startOne(app, release, k, log)));
        const added = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
        this.running.set(app.id, [...this.instancesOf(app.id), ...added].sort(byNumber));
        const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) throw failed.reason;
      } else if (wanted < current.length) {
        const kept = [...current].sort(byNumber);
        this.running.set(app.id, kept.slice(0, wanted));
        this.stopInBackground(app.id, kept.slice(wanted));
      }
    });
  }

  /** Stops the app's worker instances (its stop): resolves once they stopped. */
  async stop(appId: string, graceMs = this.o.graceMs ?? 10_000): Promise<boolean> {
    const instances = this.instancesOf(appId);
    this.running.delete(appId);
    await Promise.all(
      instances.map((i) => i.stop(graceMs).catch((e: Error) => this.o.log(`Stopping a worker instance of ${appId}: ${e.message}`))),
    );
    return instances.length > 0;
  }

  /** The app is being deleted: its worker instances stop, and those stopping already are waited for. */
  async end(appId: string, graceMs: number): Promise<void> {
    await this.turns.settled(appId);
    await this.stop(appId, graceMs);
    await this.drained(appId);
  }

  /** Resolves once every worker instance being stopped has stopped. */
  async drained(appId?: string): Promise<void> {
    await Promise.all([...this.stopping].filter(([, app]) => appId === undefined || app === appId).map(([stop]) => stop));
  }

  /**
   * At a daemon start: the worker instances an earlier daemon left running are kept when they run
   * the app's current release and it still has a range (the others stop), then each app with a
   * range gets the ones it lacks.
   */
  async restore(releases: ReadonlyMap<string, ReleaseSpec>, found: readonly Instance[]): Promise<void> {
    for (const instance of found) {
      const { appId, deploymentId } = instance.spec;
      if (releases.get(appId)?.deploymentId === deploymentId && this.runsApart(appId)) {
        this.running.set(appId, [...this.instancesOf(appId), instance].sort(byNumber));
      } else {
        this.stopInBackground(appId, [instance]);
      }
    }
    for (const appId of releases.keys()) {
      const app = this.o.store.apps.byId(appId);
      if (!app || !this.runsApart(appId)) continue;
      if (!this.running.has(appId)) this.running.set(appId, []);
      const log = (line: string) => this.o.logs.append(appId, 'system', line);
      await this.scale(app, log).catch((error: Error) =>
        this.o.log(`Could not restore the worker instances of ${app.name}: ${error.message}`),
      );
    }
  }

  /** The daemon lets go of the worker instances (they go on; the next daemon adopts them). */
  clear(): void {
    this.running.clear();
  }

  /** How many worker instances the app should run: its stored count, none without a range or without workers. */
  private wantedCount(appId: string): number {
    const app = this.o.store.apps.byId(appId);
    const range = app && workerRangeOf(app);
    if (!range) return 0;
    try {
      return workersFrom(this.o.appEnv(appId)).length > 0 ? range.count : 0;
    } catch {
      // A malformed CC_WORKER_RESTART fails the deployment before its switch; nothing to run here.
      return 0;
    }
  }

  /** One worker instance of the release: its sandbox, environment and workers as a web instance's, with KEEP_ALIVE as its main process. */
  private async startOne(app: AppRow, release: ReleaseSpec, k: number, log: (line: string) => void): Promise<Instance> {
    const instanceId = newId('instance');
    const workers = workersFrom(this.o.appEnv(app.id));
    const sandbox = await this.o.sandboxes.instance(app);
    const instance = await this.o.backend.start({
      sandbox,
      appId: app.id,
      deploymentId: release.deploymentId,
      instanceId,
      instanceNumber: WORKER_INSTANCE_BASE + k,
      releaseDir: release.releaseDir,
      ...(release.preRunLayer === undefined ? {} : { preRunLayer: release.preRunLayer }),
      // The release's own before-start commands prepare its web process, not its workers.
      beforeStart: [],
      command: KEEP_ALIVE,
      workers,
      env: this.o.launcher.environmentFor(app, release, instanceId, k, sandbox.limits.memoryBytes),
      onLog: (stream, line) => this.o.logs.append(app.id, stream, line, instanceId),
    });
    log(`Worker instance ${instanceId} started (${workers.map((w) => w.name).join(', ')})`);
    return instance;
  }

  private stopInBackground(appId: string, instances: readonly Instance[]): void {
    if (instances.length === 0) return;
    const grace = this.o.graceMs ?? 10_000;
    const stop = Promise.all(instances.map((i) => i.stop(grace)))
      .then(() => undefined)
      .catch((error: Error) => this.o.log(`Stopping a worker instance of ${appId}: ${error.message}`));
    this.stopping.set(stop, appId);
    void stop.finally(() => this.stopping.delete(stop));
  }

  private inTurn(appId: string, work: () => Promise<void>): Promise<void> {
    return this.turns.run(appId, work);
  }
}

const byNumber = (a: Instance, b: Instance) => a.spec.instanceNumber - b.spec.instanceNumber;
