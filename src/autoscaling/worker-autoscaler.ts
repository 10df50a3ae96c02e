import type { Store } from '../store/store.js';
import type { AppRow } from '../store/apps.js';
import type { Instance } from '../instances/backend.js';
import type { LogHub } from '../logs/log-hub.js';
import { workerRangeOf, type WorkerRange } from '../core/scaling-ranges.js';
import { CpuRates } from './cpu-rates.js';
import { decide, type LoadSample, type ScalingDecision } from './decide.js';
import { effectiveSettings, type AutoscalingSettings } from './settings.js';
import { applyDecision } from './apply-decision.js';

/** How reasons name what the worker decisions count. */
const UNIT = 'worker instance';

/**
 * The autoscaler's judgement of an app's worker instances: the same rules as its web instances'
 * (decide.ts: saturated CPU for `out-after`, low for `in-after`, cool-down, bounds), on their
 * workers' CPU alone (no request reaches them), inside the range of workers. Never 0: workers
 * run whatever the app's requests.
 */
export function decideWorkers(
  samples: readonly LoadSample[],
  settings: AutoscalingSettings,
  range: WorkerRange & { running: number; lastChangeAt?: number },
  now: number,
): ScalingDecision | undefined {
  return decide(
    samples,
    settings,
    {
      instances: range.running,
      minInstances: Math.max(1, range.min),
      maxInstances: range.max,
      hasWorkers: true,
      unit: UNIT,
      ...(range.lastChangeAt === undefined ? {} : { lastChangeAt: range.lastChangeAt }),
    },
    now,
  );
}

/** "1 → 2 workers: CPU 92% of 1 worker instance for 6 s": the line of the activity, the log and the events. */
export function workerDecisionLine(decision: Pick<ScalingDecision, 'from' | 'to' | 'reason'>): string {
  return `${decision.from} → ${decision.to} workers: ${decision.reason}`;
}

export interface WorkerAutoscalerOptions {
  store: Store;
  logs: LogHub;
  /** The app's worker instances now (src/serving/worker-pool.ts). */
  workerInstancesOf(appId: string): readonly Instance[];
  /** Brings them to the count stored for the app. */
  scaleWorkers(app: AppRow, log: (line: string) => void): Promise<void>;
  /** Records a decision carried out (`slipway scale`, the metrics, the events). */
  record(app: AppRow, decision: ScalingDecision, outcome: 'done' | 'failed'): void;
  sampleMs: number;
  clock(): number;
  log(line: string): void;
}

interface WorkerWatch {
  samples: LoadSample[];
  cpu: CpuRates;
  sampledAt?: number;
  stored: number;
  lastChangeAt?: number;
  busy?: Promise<void>;
  mismatchSince?: number;
}

/** As for web instances: a count that stays apart from the stored one this long is brought back. */
const RECONCILE_AFTER_MS = 30_000;

/**
 * Samples the worker instances of each app with a range of workers, at the autoscaler's pace,
 * and changes their count through the runtime's worker pool; each decision is an activity record
 * of its own, in the app's log, and recorded as the web instances' are, saying workers.
 */
export class WorkerAutoscaler {
  private readonly watches = new Map<string, WorkerWatch>();

  constructor(private readonly o: WorkerAutoscalerOptions) {}

  busy(): Array<Promise<void>> {
    return [...this.watches.values()].flatMap((w) => (w.busy ? [w.busy] : []));
  }

  tick(apps: readonly AppRow[], now: number): void {
    const ranged = apps.filter((a) => workerRangeOf(a) !== undefined);
    const wanted = new Set(ranged.map((a) => a.id));
    for (const id of this.watches.keys()) if (!wanted.has(id) && !this.watches.get(id)?.busy) this.watches.delete(id);
    for (const app of ranged) this.sample(app, workerRangeOf(app)!, now);
  }

  private sample(app: AppRow, range: WorkerRange, now: number): void {
    let watch = this.watches.get(app.id);
    if (!watch) this.watches.set(app.id, (watch = { samples: [], cpu: new CpuRates(), stored: range.count }));
    if (watch.busy) return;
    if (watch.stored !== range.count) this.restart(watch, now);
    watch.stored = range.count;
    const instances = this.o.workerInstancesOf(app.id);
    // None (stopped, no worker command, its range set since its last deployment) or between
    // counts (a person's scale under way): nothing to judge until it settles.
    if (instances.length === 0 || instances.length !== range.count) {
      watch.sampledAt = undefined;
      watch.mismatchSince = instances.length === 0 ? undefined : (watch.mismatchSince ?? now);
      if (watch.mismatchSince !== undefined && now - watch.mismatchSince >= RECONCILE_AFTER_MS) this.reconcile(app, watch, range.count);
      return;
    }
    watch.mismatchSince = undefined;
    const cpuPercent = watch.cpu.average(
      instances.map((i) => {
        const reading = i.workerCpuTime?.();
        return { id: i.id, seconds: reading?.seconds, at: reading?.at ?? now };
      }),
    );
    if (watch.sampledAt !== undefined) {
      watch.samples.push({
        from: watch.sampledAt,
        at: now,
        instances: instances.length,
        ...(cpuPercent === undefined ? {} : { cpuPercent }),
        queued: 0,
        inflight: 0,
      });
    }
    watch.sampledAt = now;
    const settings = effectiveSettings(app.autoscaling_json);
    const keepFrom = now - Math.max(settings.outAfterMs, settings.inAfterMs) - 2 * this.o.sampleMs;
    while (watch.samples.length > 0 && watch.samples[0]!.at < keepFrom) watch.samples.shift();
    const decision = decideWorkers(
      watch.samples,
      settings,
      { ...range, running: instances.length, ...(watch.lastChangeAt === undefined ? {} : { lastChangeAt: watch.lastChangeAt }) },
      now,
    );
    if (!decision) return;
    watch.busy = this.apply(app, decision, instances).finally(() => {
      watch.busy = undefined;
      const after = this.o.store.apps.byId(app.id);
      watch.stored = (after && workerRangeOf(after)?.count) ?? watch.stored;
      this.restart(watch, this.o.clock());
    });
  }

  private async apply(app: AppRow, decision: ScalingDecision, serving: readonly Instance[]): Promise<void> {
    const { store, logs } = this.o;
    const outcome = await applyDecision(
      {
        store,
        logs,
        app,
        line: workerDecisionLine(decision),
        serving,
        setCount: (count) => store.apps.setWorkerInstances(app.id, count),
        scale: (log) => this.o.scaleWorkers(app, log),
        runningCount: () => this.o.workerInstancesOf(app.id).length,
      },
      decision.to,
    );
    if (outcome) this.o.record(app, decision, outcome);
  }

  private reconcile(app: AppRow, watch: WorkerWatch, count: number): void {
    watch.mismatchSince = undefined;
    const log = (text: string) => this.o.logs.append(app.id, 'system', text);
    log(`Autoscaling: bringing the worker instances to the ${count} recorded`);
    watch.busy = this.o
      .scaleWorkers(app, log)
      .catch((error: Error) => log(`Autoscaling: could not bring the worker instances to ${count}: ${error.message}`))
      .finally(() => {
        watch.busy = undefined;
        this.restart(watch, this.o.clock());
      });
  }

  private restart(watch: WorkerWatch, now: number): void {
    watch.samples = [];
    watch.sampledAt = undefined;
    watch.lastChangeAt = now;
  }
}
