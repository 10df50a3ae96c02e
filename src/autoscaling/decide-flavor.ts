import { FLAVORS, flavorNamed } from '../core/flavors.js';
import { humanSize } from '../shared/human-size.js';
import { type LoadSample, type ScalingDecision, type ScalingState, trailingRun } from './decide.js';
import type { AutoscalingSettings } from './settings.js';

/** The app's flavour and its range (canonical names, src/core/flavors.ts). */
export interface FlavorState {
  flavor: string;
  minFlavor: string;
  maxFlavor: string;
}

const rank = (name: string) => FLAVORS.findIndex((f) => f.name === flavorNamed(name).name);
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const describe = (name: string) => `${flavorNamed(name).name} (${humanSize(flavorNamed(name).memoryBytes)})`;

/**
 * The vertical judgement (a larger or smaller flavour), pure like `decide`, with the same
 * counting of samples (at the current count, after the cool-down):
 *
 * - Memory: an instance's memory at or over `mem-out` of its limit for `out-after` -> the next
 *   flavour up, whatever the count (more instances would not lower one instance's memory).
 * - CPU that cannot be spread: saturated for `out-after` while the count is at its maximum (an
 *   app of one instance by design) -> the next flavour up (its CPU share doubles).
 * - Low: at the minimum count, the memory would stay under `mem-in` of the next flavour down and
 *   the CPU under `cpu-in`, for `in-after` -> that flavour. Since `mem-in` < `mem-out` and a
 *   flavour halves the memory, a steady load never goes up and down again.
 *
 * `cause` tells the autoscaler which rule spoke: memory comes before any change of the count.
 */
export function decideFlavor(
  samples: readonly LoadSample[],
  settings: AutoscalingSettings,
  state: ScalingState & FlavorState,
  now: number,
): (ScalingDecision & { cause: 'memory' | 'cpu' | 'low' }) | undefined {
  const n = state.instances;
  const current = rank(state.flavor);
  if (current < 0) return undefined;
  const settledAt = (state.lastChangeAt ?? Number.NEGATIVE_INFINITY) + settings.cooldownMs;
  const counted = samples.filter((s) => s.instances === n && s.from >= settledAt && s.at <= now);
  const seconds = (run: { since: number; at: number }) => Math.round((run.at - run.since) / 1000);
  const change = (to: number, direction: 'up' | 'down') => ({
    direction,
    from: n,
    to: n,
    flavor: { from: FLAVORS[current]!.name, to: FLAVORS[to]!.name },
  });

  if (current < rank(state.maxFlavor)) {
    const full = trailingRun(counted, (s) => s.memoryPercent !== undefined && s.memoryPercent >= settings.memOut);
    if (full && full.at - full.since >= settings.outAfterMs) {
      const memory = Math.round(mean(full.samples.map((s) => s.memoryPercent ?? 0)));
      return {
        ...change(current + 1, 'up'),
        cause: 'memory',
        reason: `memory ${memory}% of ${describe(state.flavor)} for ${seconds(full)} s`,
      };
    }
    if (n >= state.maxInstances) {
      const busy = trailingRun(counted, (s) => s.cpuPercent !== undefined && s.cpuPercent >= settings.cpuOut);
      if (busy && busy.at - busy.since >= settings.outAfterMs) {
        const cpu = Math.round(mean(busy.samples.map((s) => s.cpuPercent ?? 0)));
        return {
          ...change(current + 1, 'up'),
          cause: 'cpu',
          reason: `CPU ${cpu}% of ${n} instance${n === 1 ? '' : 's'} for ${seconds(busy)} s, at the maximum count`,
        };
      }
    }
  }

  if (current > rank(state.minFlavor) && n <= state.minInstances) {
    const ratio = flavorNamed(state.flavor).memoryBytes / FLAVORS[current - 1]!.memoryBytes;
    const low = trailingRun(
      counted,
      (s) =>
        s.memoryPercent !== undefined &&
        s.memoryPercent * ratio < settings.memIn &&
        s.cpuPercent !== undefined &&
        s.cpuPercent < settings.cpuIn &&
        s.queued === 0,
    );
    if (low && low.at - low.since >= settings.inAfterMs) {
      const memory = Math.round(mean(low.samples.map((s) => (s.memoryPercent ?? 0) * ratio)));
      return {
        ...change(current - 1, 'down'),
        cause: 'low',
        reason: `memory ${memory}% of ${describe(FLAVORS[current - 1]!.name)} and CPU under ${settings.cpuIn}% for ${seconds(low)} s`,
      };
    }
  }
  return undefined;
}
