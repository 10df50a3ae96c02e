/**
 * What the scaling page says of an app's scaling: the summary of its ranges and counts now,
 * the autoscaler's decisions, and what a save changed. The same words as `slipway scale`.
 */
import type { Scale } from './api.js';
import type { ScaleBody } from './scale-request.js';
import { WORKERS_BESIDE } from './scale-request.js';

type Decision = Scale['decisions'][number];

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const minute = (iso: string) => iso.slice(0, 19).replace('T', ' ');

/** "2 now; the autoscaler chooses from 1 to 4." with the flavour's range when it has one. */
export function instancesSummary(now: Scale): string {
  const count =
    now.min_instances === now.max_instances
      ? `A fixed count of ${now.instances}.`
      : `${now.asleep_since ? `Asleep since ${minute(now.asleep_since)} (wakes to ${now.instances} at its next request)` : `${now.instances} now`}; the autoscaler chooses from ${now.min_instances} to ${now.max_instances}.${now.sleeps === false ? ' It never sleeps: it has workers.' : ''}`;
  const flavor =
    now.min_flavor === now.max_flavor
      ? ''
      : ` Flavour ${now.flavor} now; the autoscaler chooses from ${now.min_flavor} to ${now.max_flavor}.`;
  return count + flavor;
}

/** The worker instances of a range of their own: how many now and running; null when the workers run beside each instance. */
export function workersSummary(now: Scale): string | null {
  const w = now.workers;
  if (!w) return null;
  const running = `${w.running.length} running`;
  return w.min === w.max
    ? `Workers: a fixed ${plural(w.count, 'worker instance')}, ${running}.`
    : `Workers: ${plural(w.count, 'worker instance')} now, ${running}; the autoscaler chooses from ${w.min} to ${w.max}.`;
}

/** "2026-11-29 05:40:12: 1 → 2 instances: CPU 97% of 1 instance for 6 s". */
export function decisionLine(d: Decision): string {
  const change =
    d.from_flavor && d.to_flavor
      ? `${d.from_flavor} → ${d.to_flavor}`
      : `${d.from} → ${d.to} ${d.target === 'workers' ? 'workers' : 'instances'}`;
  return `${minute(d.at)}: ${change}: ${d.reason}${d.outcome === 'failed' ? ' (failed)' : ''}`;
}

/** What a save did, from the change sent, the scaling before and the one it answered (and its note: what applies later). */
export function savedMessage(change: ScaleBody, before: Scale, now: Scale, note?: string): string {
  const countRange = now.min_instances !== now.max_instances;
  const flavorRange = now.min_flavor !== now.max_flavor;
  const count = countRange ? `${now.min_instances} to ${now.max_instances} instances` : plural(now.instances, 'instance');
  const flavor = flavorRange ? `${now.min_flavor} to ${now.max_flavor}` : now.flavor;
  const parts = [`${count} of ${flavor}${countRange || flavorRange ? ', the autoscaler choosing from its measured load' : ''}`];
  if (change.instances !== undefined) parts.push('the instance count applied at once');
  // A range alone changes no instance: the autoscaler moves the flavour inside it.
  if (now.flavor !== before.flavor) parts.push('the flavour applies at the next deployment or restart');
  if (change.workers === WORKERS_BESIDE) parts.push('the workers run beside each instance');
  else if (now.workers && (change.workers !== undefined || change.minWorkers !== undefined)) {
    const w = now.workers;
    parts.push(
      `the workers run in ${w.min === w.max ? plural(w.min, 'worker instance') : `${w.min} to ${w.max} worker instances`} of their own`,
    );
  }
  return `Saved: ${parts.join('; ')}.${note ? ` ${note}` : ''} No deployment was started.`;
}
