import type { AutoscalingSettings } from './settings.js';

/** The load of one app over one sampling interval. */
export interface LoadSample {
  /** The interval measured, in ms since the epoch. */
  from: number;
  at: number;
  /** Instances serving during the interval. */
  instances: number;
  /** Average CPU of those instances, % of one core; undefined when it could not be measured. */
  cpuPercent?: number;
  /** Requests waiting at the router for an instance (HAProxy's queue). */
  queued: number;
  /** Requests the router has with the app's instances now. */
  inflight: number;
  /** Requests the router sent the app during the interval; undefined when it could not tell. */
  requests?: number;
  /** The highest memory use of an instance, % of its limit; undefined when unmeasured. */
  memoryPercent?: number;
}

/** Where the app stands: its count, its range, and when the last change was made. */
export interface ScalingState {
  instances: number;
  minInstances: number;
  maxInstances: number;
  /** When the last change (of the autoscaler or a person) took effect; undefined: none known. */
  lastChangeAt?: number;
  /** The app runs workers (in its instances): it never sleeps, whatever its minimum. */
  hasWorkers?: boolean;
  /** What is counted, as reasons name it: `instance` (the default), or `worker instance` for an app's workers of their own range. */
  unit?: string;
}

export interface ScalingDecision {
  direction: 'up' | 'down';
  /** The instance count before and after (the same for a change of flavour). */
  from: number;
  to: number;
  /** A change of flavour (vertical): the instances restart with the new one. */
  flavor?: { from: string; to: string };
  /** "CPU 85% of 3 instances for 8 s". */
  reason: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/**
 * The autoscaler's judgement, from the samples of one app (oldest first), its settings and its
 * state: a new instance count, or undefined to keep it. Pure, so every rule below is tested on
 * synthetic series (decide.test.ts).
 *
 * - Only samples taken at the current count, once `cooldown` passed since the last change, count:
 *   a new instance warms up and a removed one drains before the load is judged again.
 * - Out: every sample of the last `out-after` saturated (CPU at or over `cpu-out`, requests queued
 *   at the router, or in flight per instance at `inflight-out`); the count grows to what brings
 *   the CPU under `cpu-out` (at least one more), up to the maximum.
 * - In: every sample of the last `in-after` so low that the same load on one instance fewer stays
 *   under `cpu-in`; one instance at a time, down to the minimum.
 * - Hysteresis: since `cpu-in` < `cpu-out` and both rules judge the load as it would be after the
 *   change, a steady load never scales out and then in again (nor the reverse).
 */
export function decide(
  samples: readonly LoadSample[],
  settings: AutoscalingSettings,
  state: ScalingState,
  now: number,
): ScalingDecision | undefined {
  const n = state.instances;
  const unit = state.unit ?? 'instance';
  if (n < state.minInstances) {
    return { direction: 'up', from: n, to: state.minInstances, reason: `the minimum is ${plural(state.minInstances, unit)}` };
  }
  if (n > state.maxInstances) {
    return { direction: 'down', from: n, to: state.maxInstances, reason: `the maximum is ${plural(state.maxInstances, unit)}` };
  }
  const settledAt = (state.lastChangeAt ?? Number.NEGATIVE_INFINITY) + settings.cooldownMs;
  const counted = samples.filter((s) => s.instances === n && s.from >= settledAt && s.at <= now);

  const saturated = (s: LoadSample) =>
    (s.cpuPercent !== undefined && s.cpuPercent >= settings.cpuOut) ||
    s.queued > 0 ||
    (settings.inflightOut > 0 && s.inflight / n >= settings.inflightOut);
  if (n < state.maxInstances) {
    const found = trailingRun(counted, saturated);
    // The CPU is a rate over each sample's interval; the router's queue and requests in flight
    // are read at the sample's time only, so a run they make up begins at its first reading.
    const byCpu = found?.samples[0]?.cpuPercent !== undefined && found.samples[0].cpuPercent >= settings.cpuOut;
    const run = found && { ...found, since: byCpu ? found.since : found.samples[0]!.at };
    if (run && run.at - run.since >= settings.outAfterMs) {
      const cpus = run.samples.flatMap((s) => (s.cpuPercent === undefined ? [] : [s.cpuPercent]));
      const cpu = cpus.length === run.samples.length ? mean(cpus) : undefined;
      const wanted = cpu !== undefined && cpu >= settings.cpuOut ? Math.ceil((n * cpu) / settings.cpuOut) : n + 1;
      const to = Math.min(state.maxInstances, Math.max(n + 1, wanted));
      return { direction: 'up', from: n, to, reason: outReason(run.samples, settings, n, cpu, run.at - run.since, unit) };
    }
  }

  const asleep = sleepDecision(counted, settings, state);
  if (asleep) return asleep;

  // One instance is the least that serves: 0 (a minimum of 0) is the sleep above, not a scale-in.
  if (n > Math.max(1, state.minInstances)) {
    const low = (s: LoadSample) =>
      s.cpuPercent !== undefined &&
      (s.cpuPercent * n) / (n - 1) < settings.cpuIn &&
      s.queued === 0 &&
      (settings.inflightOut === 0 || s.inflight / (n - 1) < settings.inflightOut / 2);
    const run = trailingRun(counted, low);
    if (run && run.at - run.since >= settings.inAfterMs) {
      const cpu = mean(run.samples.map((s) => s.cpuPercent ?? 0));
      const seconds = Math.round((run.at - run.since) / 1000);
      return {
        direction: 'down',
        from: n,
        to: n - 1,
        reason: `CPU ${Math.round(cpu)}% of ${plural(n, unit)} for ${seconds} s (under ${settings.cpuIn}% on ${n - 1})`,
      };
    }
  }
  return undefined;
}

/**
 * Scale to zero: with a minimum of 0, an app to which the router sent no request (none in
 * flight, none queued) for `idle-after` sleeps: its instances stop, and its next request wakes
 * it. Never an app with workers (they run in its instances and would stop with them), and never
 * on samples whose requests the router could not count.
 */
function sleepDecision(counted: LoadSample[], settings: AutoscalingSettings, state: ScalingState): ScalingDecision | undefined {
  if (state.minInstances !== 0 || state.hasWorkers || state.instances === 0) return undefined;
  const run = trailingRun(counted, (s) => s.requests === 0 && s.inflight === 0 && s.queued === 0);
  if (!run || run.at - run.since < settings.idleAfterMs) return undefined;
  return { direction: 'down', from: state.instances, to: 0, reason: `no request for ${describeSpan(run.at - run.since)}` };
}

function describeSpan(ms: number): string {
  const seconds = Math.round(ms / 1000);
  return seconds >= 120 ? `${Math.round(seconds / 60)} min` : `${seconds} s`;
}

/** The newest samples that all satisfy `holds`, from the time the first of them began. */
export function trailingRun(
  samples: readonly LoadSample[],
  holds: (s: LoadSample) => boolean,
): { samples: LoadSample[]; since: number; at: number } | undefined {
  let start = samples.length;
  while (start > 0 && holds(samples[start - 1]!)) start--;
  if (start === samples.length) return undefined;
  const run = samples.slice(start);
  return { samples: run, since: run[0]!.from, at: run[run.length - 1]!.at };
}

function outReason(
  run: LoadSample[],
  settings: AutoscalingSettings,
  n: number,
  cpu: number | undefined,
  spanMs: number,
  unit = 'instance',
): string {
  const seconds = `for ${Math.round(spanMs / 1000)} s`;
  if (cpu !== undefined && run.every((s) => (s.cpuPercent ?? 0) >= settings.cpuOut)) {
    return `CPU ${Math.round(cpu)}% of ${plural(n, unit)} ${seconds}`;
  }
  if (run.every((s) => s.queued > 0)) {
    return `${plural(Math.max(...run.map((s) => s.queued)), 'request')} queued at the router ${seconds}`;
  }
  if (settings.inflightOut > 0 && run.every((s) => s.inflight / n >= settings.inflightOut)) {
    return `${Math.round(mean(run.map((s) => s.inflight / n)))} requests in flight per ${unit} ${seconds}`;
  }
  const last = run[run.length - 1]!;
  return `${plural(n, unit)} saturated ${seconds} (last: CPU ${Math.round(last.cpuPercent ?? 0)}%, ${last.inflight} in flight, ${last.queued} queued)`;
}
