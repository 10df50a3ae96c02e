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

/** Every ~2 s: a load step is seen within a sample or two, and a sample is cheap (a few cgroup files, one stats line per app). */
export const SAMPLE_MS = 2000;

/** A decision once carried out: the new count serves, or it failed and the count is what serves. */
export interface AppliedDecision extends ScalingDecision {
  appId: string;
  at: string;
  outcome: 'done' | 'failed';
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
  routerLoad(): Promise<ReadonlyMap<string, { sessions: number; queued: number }> | undefined>;
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
}

/**
 * A serving count that stays apart from the stored one this long (a deployment that started the
 * count of before a decision, an instance that failed to start) is brought back by scaling again.
 */
const RECONCILE_AFTER_MS = 30_000;

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
  private ticking = false;
  private stopped = false;

  constructor(private readonly o: AutoscalerOptions) {}

  private now(): number {
    return (this.o.clock ?? Date.now)();
  }

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.o.sampleMs ?? SAMPLE_MS);
    this.timer.unref();
  }

  /** Stops sampling; a change under way is awaited (its instances are the runtime's either way). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.idle();
  }

  /** Resolves once no change is under way. */
  async idle(): Promise<void> {
    while ([...this.watches.values()].some((w) => w.busy)) await Promise.all([...this.watches.values()].map((w) => w.busy));
  }

  /** One sample of every app with a range, and the decisions due; errors are logged, never thrown. */
  async tick(now = this.now()): Promise<void> {
    if (this.ticking || this.stopped) return;
    this.ticking = true;
    try {
      const apps = this.o.store.apps.all().filter(autoscales);
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

  private sample(app: AppRow, router: { sessions: number; queued: number } | undefined, now: number): void {
    const ranges = rangesOf(app);
    let watch = this.watches.get(app.id);
    if (!watch) {
      watch = { samples: [], cpu: new CpuRates(), stored: ranges.instances };
      this.watches.set(app.id, watch);
    }
    if (watch.busy) return;
    const instances = this.o.instancesOf(app.id);
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
      });
    }
    watch.sampledAt = now;
    const settings = effectiveSettings(app.autoscaling_json);
    const keepFrom = now - Math.max(settings.outAfterMs, settings.inAfterMs) - 2 * (this.o.sampleMs ?? SAMPLE_MS);
    while (watch.samples.length > 0 && watch.samples[0]!.at < keepFrom) watch.samples.shift();
    const state = {
      instances: instances.length,
      minInstances: ranges.minInstances,
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
      const current = watch;
      const change = decision.flavor ? this.applyFlavor(app, decision, instances) : this.apply(app, decision, instances);
      current.busy = change.finally(() => {
        current.busy = undefined;
        current.stored = this.o.store.apps.byId(app.id)?.instances ?? decision.to;
        this.restart(current, this.now());
      });
    }
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
    const line = `${decision.from} → ${decision.to} instances: ${decision.reason}`;
    const commit = store.deployments.byId(serving[0]?.spec.deploymentId ?? '')?.commit_sha ?? '';
    // The app's activity lists the change as a record of its own, with its log.
    const record = store.deployments.create({ appId: app.id, commit, cause: AUTOSCALING_CAUSE, userId: null });
    store.deployments.setPhase(record.id, 'run');
    const log = (text: string) => {
      logs.append(record.id, 'system', text);
      logs.append(app.id, 'system', text);
    };
    log(`Autoscaling: ${line}`);
    store.apps.setInstances(app.id, decision.to);
    let outcome: 'done' | 'failed' = 'done';
    let message = line;
    try {
      await this.o.scale(app, log);
    } catch (error) {
      outcome = 'failed';
      // The count is what serves: the next decision starts from there.
      const running = this.o.instancesOf(app.id).length;
      if (store.apps.byId(app.id)) store.apps.setInstances(app.id, Math.max(1, running));
      message = `${line} — failed: ${(error as Error).message}`;
      log(`Autoscaling failed: ${(error as Error).message}`);
    }
    logs.finish(record.id);
    // A deleted app took its activity and records with it.
    if (!store.apps.byId(app.id)) return;
    store.deployments.setPhase(record.id, 'done');
    store.deployments.finish(record.id, outcome === 'done' ? 'OK' : 'FAIL', message);
    this.record(app, decision, outcome);
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

  private record(app: AppRow, decision: ScalingDecision, outcome: 'done' | 'failed'): void {
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
    });
    this.o.onDecision({ ...decision, appId: app.id, at, outcome });
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
