import type { Store } from '../store/store.js';
import type { AppRow } from '../store/apps.js';
import type { Instance } from '../instances/backend.js';
import type { LogHub } from '../logs/log-hub.js';
import { AUTOSCALING_CAUSE, autoscales, rangesOf } from '../core/scaling-ranges.js';
import { CpuRates } from './cpu-rates.js';
import { decide, type LoadSample, type ScalingDecision } from './decide.js';
import { decideFlavor } from './decide-flavor.js';
import { flavorNamed } from '../core/flavors.js';
import { effectiveSettings } from './settings.js';
import { WorkerAutoscaler } from './worker-autoscaler.js';
import { applyDecision } from './apply-decision.js';

/** Every ~2 s: a load step is seen within a sample or two, and a sample is cheap (a few cgroup files, one stats line per app). */
export const SAMPLE_MS = 2000;

/** A decision once carried out: the new count serves, or it failed and the count is what serves. */
export interface AppliedDecision extends ScalingDecision {
  appId: string;
  at: string;
  outcome: 'done' | 'failed';
  /** The count it changed: the worker instances' (a range of workers of their own), else the instances'. */
  target?: 'instances' | 'workers';
}

export interface AutoscalerOptions {
  store: Store;
  logs: LogHub;
  /** The app's serving instances now. */
  instancesOf(appId: string): readonly Instance[];
  /** Brings the app's serving instances to the count stored for it: new ones health-checked first, removed ones drained. */
  scale(app: AppRow, log: (line: string) => void): Promise<void>;
  /**
   * Restarts the app's current release hitlessly (new instances with the flavour now stored,
   * health-checked, then the switch and the drain), recorded in its activity with `line`;
   * resolves with how it ended. Absent: flavours are not changed.
   */
  restart?(app: AppRow, line: string): Promise<'OK' | 'FAIL' | 'CANCELLED'>;
  /** Each app's requests in flight and queued at the router now; undefined when the router cannot tell. */
  routerLoad(): Promise<ReadonlyMap<string, { sessions: number; queued: number; total?: number }> | undefined>;
  /**
   * Scale to zero (absent: apps never sleep): `sleep` holds the app's requests at the router and
   * stops its instances (drained); `wake` starts them again, health-checked, and lets the held
   * requests go on; `wakeRequests` says which sleeping apps a request waits for.
   */
  sleep?(appId: string): Promise<void>;
  wake?(app: AppRow, log: (line: string) => void): Promise<void>;
  wakeRequests?(): Promise<Set<string> | undefined>;
  /** How often the router is asked for requests waiting for a sleeping app (only while one sleeps). */
  wakePollMs?: number;
  /** The app's worker instances (a range of workers of its own) and their scaling; absent: workers are not scaled apart. */
  workerInstancesOf?(appId: string): readonly Instance[];
  scaleWorkers?(app: AppRow, log: (line: string) => void): Promise<void>;
  /** Told of each decision once carried out (the metrics and the notifications follow). */
  onDecision(decision: AppliedDecision): void;
  log(line: string): void;
  sampleMs?: number;
  /** The time samples and changes are told in (Date.now; the tests' own clock). */
  clock?: () => number;
}

interface AppWatch {
  samples: LoadSample[];
  cpu: CpuRates;
  /** The previous sample's time: the next one measures from there. */
  sampledAt?: number;
  /** The count stored at the previous sample: a change by anyone else restarts the judgement. */
  stored: number;
  lastChangeAt?: number;
  /** A change under way: nothing is judged until it ends. */
  busy?: Promise<void>;
  /** Since when the serving count differs from the stored one. */
  mismatchSince?: number;
  /** The router's count of requests sent to the app at the previous sample (stot): the next sample's requests are the difference. */
  requestsTotal?: number;
  /** A wake that failed: the next is not tried before this time. */
  wakeNotBefore?: number;
}

/**
 * A serving count that stays apart from the stored one this long (a deployment that started the
 * count of before a decision, an instance that failed to start) is brought back by scaling again.
 */
const RECONCILE_AFTER_MS = 30_000;

/**
 * While an app sleeps, the router is asked this often whether a request waits for it: the
 * wake's first step, so part of the first request's latency (a `show map` on the admin socket).
 */
export const WAKE_POLL_MS = 200;
/** A wake that failed (no instance passed its health check) is tried again after this. */
const WAKE_RETRY_MS = 10_000;

/**
 * Samples, every SAMPLE_MS, the load of each app that has a range (its instances' CPU from their
 * control groups, its requests at the router), asks `decide` and carries the decision out
 * through the runtime's own scaling: new instances serve once healthy, removed ones leave the
 * router first and drain. Each decision is recorded (`slipway scale`), in the app's activity
 * and log, and told to `onDecision`.
 */
export class Autoscaler {
  private readonly watches = new Map<string, AppWatch>();
  private timer: NodeJS.Timeout | undefined;
  private wakeTimer: NodeJS.Timeout | undefined;
  private polling = false;
  private ticking = false;
  private stopped = false;

  private readonly workers: WorkerAutoscaler | undefined;

  constructor(private readonly o: AutoscalerOptions) {
    const { workerInstancesOf, scaleWorkers } = o;
    this.workers =
      workerInstancesOf && scaleWorkers
        ? new WorkerAutoscaler({
            store: o.store,
            logs: o.logs,
            workerInstancesOf,
            scaleWorkers,
            record: (app, decision, outcome) => this.record(app, decision, outcome, 'workers'),
            sampleMs: o.sampleMs ?? SAMPLE_MS,
            clock: () => this.now(),
            log: o.log,
          })
        : undefined;
  }

  private now(): number {
    return (this.o.clock ?? Date.now)();
  }

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.o.sampleMs ?? SAMPLE_MS);
    this.timer.unref();
    if (this.o.wakeRequests) {
      this.wakeTimer ??= setInterval(() => void this.pollWakes(), this.o.wakePollMs ?? WAKE_POLL_MS);
      this.wakeTimer.unref();
    }
  }

  /** Wakes each sleeping app a request waits for at the router; errors are logged, never thrown. */
  async pollWakes(now = this.now()): Promise<void> {
    if (this.polling || this.stopped || !this.o.wakeRequests) return;
    this.polling = true;
    try {
      const asleep = this.o.store.apps.all().filter((a) => a.asleep_since);
      if (asleep.length === 0) return;
      const waiting = await this.o.wakeRequests();
      for (const app of asleep) {
        if (!waiting?.has(app.id)) continue;
        const watch = this.watchOf(app);
        if (watch.busy || (watch.wakeNotBefore ?? 0) > now) continue;
        this.startChange(app, watch, this.applyWake(app, 'a request arrived', watch));
      }
    } catch (error) {
      this.o.log(`Autoscaler: ${(error as Error).message}`);
    } finally {
      this.polling = false;
    }
  }

  /** Stops sampling; a change under way is awaited (its instances are the runtime's either way). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.wakeTimer);
    await this.idle();
  }

  /** Resolves once no change is under way. */
  async idle(): Promise<void> {
    const busy = () => [...[...this.watches.values()].flatMap((w) => (w.busy ? [w.busy] : [])), ...(this.workers?.busy() ?? [])];
    while (busy().length > 0) await Promise.all(busy());
  }

  /** One sample of every app with a range, and the decisions due; errors are logged, never thrown. */
  async tick(now = this.now()): Promise<void> {
    if (this.ticking || this.stopped) return;
    this.ticking = true;
    try {
      const all = this.o.store.apps.all();
      // An app asleep whose range no longer allows 0 is woken (one stopped meanwhile only stops sleeping).
      for (const app of all) if (app.asleep_since && !(autoscales(app) && rangesOf(app).minInstances === 0)) this.wakeForRange(app);
      // Worker instances are judged on their own CPU only: no request of the router's needed.
      this.workers?.tick(all, now);
      const apps = all.filter(autoscales);
      const wanted = new Set(apps.map((a) => a.id));
      for (const id of this.watches.keys()) if (!wanted.has(id) && !this.watches.get(id)?.busy) this.watches.delete(id);
      if (apps.length === 0) return;
      const load = await this.o.routerLoad().catch(() => undefined);
      for (const app of apps) this.sample(app, load?.get(app.id), now);
    } catch (error) {
      this.o.log(`Autoscaler: ${(error as Error).message}`);
    } finally {
      this.ticking = false;
    }
  }

  private watchOf(app: AppRow): AppWatch {
    let watch = this.watches.get(app.id);
    if (!watch) {
      watch = { samples: [], cpu: new CpuRates(), stored: rangesOf(app).instances };
      this.watches.set(app.id, watch);
    }
    return watch;
  }

  private wakeForRange(app: AppRow): void {
    const watch = this.watchOf(app);
    if (watch.busy) return;
    const min = rangesOf(app).minInstances;
    this.startChange(
      app,
      watch,
      this.applyWake(app, autoscales(app) ? `the minimum is ${min} instance${min === 1 ? '' : 's'}` : 'the count is fixed', watch),
    );
  }

  private startChange(app: AppRow, watch: AppWatch, change: Promise<void>): void {
    watch.busy = change.finally(() => {
      watch.busy = undefined;
      watch.stored = this.o.store.apps.byId(app.id)?.instances ?? watch.stored;
      watch.requestsTotal = undefined;
      this.restart(watch, this.now());
    });
  }

  private sample(app: AppRow, router: { sessions: number; queued: number; total?: number } | undefined, now: number): void {
    const ranges = rangesOf(app);
    const watch = this.watchOf(app);
    if (watch.busy) return;
    const instances = this.o.instancesOf(app.id);
    if (app.asleep_since) {
      // Deployed or started again while asleep: it serves, so it is awake (the router's hold goes).
      if (instances.length > 0) this.startChange(app, watch, this.applyWake(app, 'the app was started', watch));
      return;
    }
    const total = router?.total;
    const requests =
      total !== undefined && watch.requestsTotal !== undefined && total >= watch.requestsTotal ? total - watch.requestsTotal : undefined;
    watch.requestsTotal = total;
    if (watch.stored !== ranges.instances) this.restart(watch, now);
    watch.stored = ranges.instances;
    // Not serving (stopped, not deployed yet) or between counts (a deployment or a person's
    // scale under way): nothing to judge until it settles.
    if (instances.length === 0 || instances.length !== ranges.instances) {
      watch.sampledAt = undefined;
      watch.mismatchSince = instances.length === 0 ? undefined : (watch.mismatchSince ?? now);
      if (watch.mismatchSince !== undefined && now - watch.mismatchSince >= RECONCILE_AFTER_MS)
        this.reconcile(app, watch, ranges.instances);
      return;
    }
    watch.mismatchSince = undefined;
    const cpuPercent = watch.cpu.average(
      instances.map((i) => {
        const reading = i.cpuTime?.();
        return { id: i.id, seconds: reading?.seconds, at: reading?.at ?? now };
      }),
    );
    const memoryPercent = highestMemory(instances);
    if (watch.sampledAt !== undefined) {
      watch.samples.push({
        from: watch.sampledAt,
        at: now,
        instances: instances.length,
        ...(cpuPercent === undefined ? {} : { cpuPercent }),
        ...(memoryPercent === undefined ? {} : { memoryPercent }),
        queued: router?.queued ?? 0,
        inflight: router?.sessions ?? 0,
        ...(requests === undefined ? {} : { requests }),
      });
    }
    watch.sampledAt = now;
    const settings = effectiveSettings(app.autoscaling_json);
    const keepFrom = now - Math.max(settings.outAfterMs, settings.inAfterMs) - 2 * (this.o.sampleMs ?? SAMPLE_MS);
    while (watch.samples.length > 0 && watch.samples[0]!.at < keepFrom) watch.samples.shift();
    const state = {
      instances: instances.length,
      // Without a router that holds requests, an app never sleeps: one instance is its least.
      minInstances: this.o.sleep ? ranges.minInstances : Math.max(1, ranges.minInstances),
      hasWorkers: instances.some((i) => (i.spec.workers?.length ?? 0) > 0),
      maxInstances: ranges.maxInstances,
      ...(watch.lastChangeAt === undefined ? {} : { lastChangeAt: watch.lastChangeAt }),
    };
    // Flavours change only when the instances run the flavour stored (a person's change waits for
    // its restart) and a restart can be asked for.
    const running = instances.every((i) => flavorOf(i) === ranges.flavor);
    const vertical =
      this.o.restart && running && ranges.minFlavor !== ranges.maxFlavor
        ? decideFlavor(
            watch.samples,
            settings,
            { ...state, flavor: ranges.flavor, minFlavor: ranges.minFlavor, maxFlavor: ranges.maxFlavor },
            now,
          )
        : undefined;
    // Memory first: more instances would not lower one instance's memory.
    const decision = vertical?.cause === 'memory' ? vertical : (decide(watch.samples, settings, state, now) ?? vertical);
    if (decision) {
      const change = decision.flavor
        ? this.applyFlavor(app, decision, instances)
        : decision.to === 0
          ? this.applySleep(app, decision, instances)
          : this.apply(app, decision, instances);
      this.startChange(app, watch, change);
    }
  }

  /** An activity record of the app for a change, and a log writing to it and to the app's log. */
  private activity(app: AppRow, commit: string): { id: string; log: (text: string) => void } {
    const { store, logs } = this.o;
    const record = store.deployments.create({ appId: app.id, commit, cause: AUTOSCALING_CAUSE, userId: null });
    store.deployments.setPhase(record.id, 'run');
    return {
      id: record.id,
      log: (text: string) => {
        logs.append(record.id, 'system', text);
        logs.append(app.id, 'system', text);
      },
    };
  }

  private finishActivity(app: AppRow, id: string, outcome: 'done' | 'failed', message: string): boolean {
    const { store, logs } = this.o;
    logs.finish(id);
    if (!store.apps.byId(app.id)) return false;
    store.deployments.setPhase(id, 'done');
    store.deployments.finish(id, outcome === 'done' ? 'OK' : 'FAIL', message);
    return true;
  }

  /**
   * Scale to zero: the app's requests are held at the router from now on (the first wakes it),
   * its instances leave the routing table, finish their requests and stop. The stored count
   * stays: it is what the app wakes to.
   */
  private async applySleep(app: AppRow, decision: ScalingDecision, serving: readonly Instance[]): Promise<void> {
    const { store } = this.o;
    const line = `${decision.from} → 0 instances: ${decision.reason}; the app sleeps, its next request wakes it`;
    const commit = store.deployments.byId(serving[0]?.spec.deploymentId ?? '')?.commit_sha ?? '';
    const { id, log } = this.activity(app, commit);
    log(`Autoscaling: ${line}`);
    store.apps.setAsleep(app.id, new Date(this.now()).toISOString());
    let outcome: 'done' | 'failed' = 'done';
    let message = line;
    try {
      await this.o.sleep!(app.id);
    } catch (error) {
      outcome = 'failed';
      if (store.apps.byId(app.id)) store.apps.setAsleep(app.id, null);
      message = `${line} — failed: ${(error as Error).message}`;
      log(`Autoscaling failed: ${(error as Error).message}`);
    }
    if (this.finishActivity(app, id, outcome, message)) this.record(app, decision, outcome);
  }

  /**
   * Wakes a sleeping app: its stored count of instances start and pass their health check, then
   * the router lets the held requests go on to them. A wake that fails leaves it asleep (its
   * requests still held; the router answers them 503 "waking" past its hold's limit) and is tried
   * again after WAKE_RETRY_MS.
   */
  private async applyWake(app: AppRow, reason: string, watch: AppWatch): Promise<void> {
    const { store } = this.o;
    if (store.deployments.release(app.id)?.wanted !== 'running') {
      // Stopped (or never deployed) while asleep: nothing to wake, and its requests wait no more.
      await this.o.wake?.(app, () => undefined);
      if (store.apps.byId(app.id)) store.apps.setAsleep(app.id, null);
      this.o.logs.append(app.id, 'system', 'Autoscaling: the app is stopped, so it no longer sleeps; its requests are not held');
      return;
    }
    const to = Math.max(1, app.instances ?? 1);
    const decision: ScalingDecision = { direction: 'up', from: 0, to, reason };
    const line = `0 → ${to} instance${to === 1 ? '' : 's'}: ${reason}; the app wakes`;
    const release = store.deployments.release(app.id);
    const commit = (release && store.deployments.byId(release.deployment_id)?.commit_sha) ?? '';
    const { id, log } = this.activity(app, commit);
    log(`Autoscaling: ${line}`);
    let outcome: 'done' | 'failed' = 'done';
    let message = line;
    try {
      if (!this.o.wake) throw new Error('this daemon cannot wake apps');
      await this.o.wake(app, log);
      if (store.apps.byId(app.id)) store.apps.setAsleep(app.id, null);
    } catch (error) {
      outcome = 'failed';
      watch.wakeNotBefore = this.now() + WAKE_RETRY_MS;
      message = `${line} — failed: ${(error as Error).message}`;
      log(`Autoscaling: the wake failed (${(error as Error).message}); tried again at the next request after ${WAKE_RETRY_MS / 1000} s`);
    }
    if (this.finishActivity(app, id, outcome, message)) this.record(app, decision, outcome);
  }

  private reconcile(app: AppRow, watch: AppWatch, count: number): void {
    watch.mismatchSince = undefined;
    const log = (text: string) => this.o.logs.append(app.id, 'system', text);
    log(`Autoscaling: bringing the instances to the ${count} recorded`);
    watch.busy = this.o
      .scale(app, log)
      .catch((error: Error) => log(`Autoscaling: could not bring the instances to ${count}: ${error.message}`))
      .finally(() => {
        watch.busy = undefined;
        this.restart(watch, this.now());
      });
  }

  /** A change took effect: the judgement starts again from its samples after the cool-down. */
  private restart(watch: AppWatch, now: number): void {
    watch.samples = [];
    watch.sampledAt = undefined;
    watch.lastChangeAt = now;
  }

  private async apply(app: AppRow, decision: ScalingDecision, serving: readonly Instance[]): Promise<void> {
    const { store, logs } = this.o;
    // The app's activity lists the change as a record of its own, with its log.
    const outcome = await applyDecision(
      {
        store,
        logs,
        app,
        line: `${decision.from} → ${decision.to} instances: ${decision.reason}`,
        serving,
        setCount: (count) => store.apps.setInstances(app.id, count),
        scale: (log) => this.o.scale(app, log),
        runningCount: () => this.o.instancesOf(app.id).length,
      },
      decision.to,
    );
    if (outcome) this.record(app, decision, outcome);
  }

  /**
   * A change of flavour: the CPU share applies at once to the running instances (their control
   * groups take it live); the memory needs new instances, so the release restarts hitlessly
   * with the new flavour. If the restart fails, the flavour and the share go back.
   */
  private async applyFlavor(app: AppRow, decision: ScalingDecision, serving: readonly Instance[]): Promise<void> {
    const { store, logs } = this.o;
    const { from, to } = decision.flavor!;
    const line = `${from} → ${to}: ${decision.reason}`;
    logs.append(app.id, 'system', `Autoscaling: ${line}`);
    const setShare = (name: string) => {
      const f = flavorNamed(name);
      for (const instance of serving) instance.setCpuShare?.(f.cpuShares, f.cpuWeight);
    };
    store.apps.setFlavors(app.id, { flavor: to });
    setShare(to);
    let outcome: 'done' | 'failed' = 'done';
    try {
      const ended = await this.o.restart!(app, line);
      if (ended !== 'OK') throw new Error(`the restart with ${to} ended ${ended}`);
    } catch (error) {
      outcome = 'failed';
      if (!store.apps.byId(app.id)) return;
      store.apps.setFlavors(app.id, { flavor: from });
      setShare(from);
      logs.append(app.id, 'system', `Autoscaling: ${from} → ${to} failed (${(error as Error).message}); the instances keep ${from}`);
    }
    if (!store.apps.byId(app.id)) return;
    this.record(app, decision, outcome);
  }

  private record(app: AppRow, decision: ScalingDecision, outcome: 'done' | 'failed', target: 'instances' | 'workers' = 'instances'): void {
    const at = new Date(this.now()).toISOString();
    this.o.store.scalingDecisions.add({
      app_id: app.id,
      at,
      direction: decision.direction,
      from_instances: decision.from,
      to_instances: decision.to,
      from_flavor: decision.flavor?.from ?? null,
      to_flavor: decision.flavor?.to ?? null,
      reason: decision.reason,
      outcome,
      target,
    });
    this.o.onDecision({ ...decision, appId: app.id, at, outcome, ...(target === 'workers' ? { target } : {}) });
  }
}

/**
 * The highest memory need of the instances, % of each one's limit (the file cache the kernel may
 * take back left out where the backend tells it); undefined when none is measured.
 */
function highestMemory(instances: readonly Instance[]): number | undefined {
  let highest: number | undefined;
  for (const instance of instances) {
    const used = instance.memoryWorkingSet ? instance.memoryWorkingSet() : instance.memoryUsage();
    const limit = instance.spec.sandbox.limits.memoryBytes;
    if (used === undefined || !(limit > 0)) continue;
    highest = Math.max(highest ?? 0, (100 * used) / limit);
  }
  return highest;
}

/** The flavour an instance runs with (undefined when its record names none known). */
function flavorOf(instance: Instance): string | undefined {
  try {
    return flavorNamed(instance.spec.sandbox.flavor).name;
  } catch {
    return undefined;
  }
}
