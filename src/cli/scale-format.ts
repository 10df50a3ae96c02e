import type { ScaleView } from '../shared/api-types.js';
import { humanSize } from '../shared/human-size.js';

/** The options of `slipway scale` that change something, as typed. */
export interface ScaleOptions {
  instances?: string;
  'min-instances'?: string;
  'max-instances'?: string;
  flavor?: string;
  'min-flavor'?: string;
  'max-flavor'?: string;
  'build-flavor'?: string;
  autoscaling?: string;
  workers?: string;
  'min-workers'?: string;
  'max-workers'?: string;
  disk?: string;
}

const FIELDS: ReadonlyArray<[keyof ScaleOptions, string]> = [
  ['instances', 'instances'],
  ['min-instances', 'minInstances'],
  ['max-instances', 'maxInstances'],
  ['flavor', 'flavor'],
  ['min-flavor', 'minFlavor'],
  ['max-flavor', 'maxFlavor'],
  ['build-flavor', 'buildFlavor'],
  ['autoscaling', 'autoscaling'],
  ['workers', 'workers'],
  ['min-workers', 'minWorkers'],
  ['max-workers', 'maxWorkers'],
  ['disk', 'disk'],
];

/**
 * The body of `PUT /v1/apps/:app/scale` from the options given. Values go as typed: the daemon
 * checks them against its own tables (counts, flavours, settings) and says what is wrong.
 */
export function scaleRequestBody(options: ScaleOptions): Record<string, string> {
  const body: Record<string, string> = {};
  for (const [option, field] of FIELDS) {
    const value = options[option];
    if (value !== undefined) body[field] = value;
  }
  return body;
}

/** "2 (the autoscaler chooses from 1 to 4)", "nano (512 MiB) (the autoscaler chooses from pico to S)", or the value alone when fixed. */
function range(current: string, min: string, max: string, chooser: string): string {
  return min === max ? current : `${current} (${chooser}${min} to ${max})`;
}

/** The fields `slipway scale` prints: ranges, the count and flavour now, the autoscaler's settings. */
export function scaleFields(s: ScaleView): Record<string, string> {
  const count = s.asleep_since
    ? `0, asleep since ${s.asleep_since.slice(0, 19).replace('T', ' ')} (wakes to ${s.instances} at its next request)`
    : String(s.instances);
  return {
    instances: range(count, String(s.min_instances), String(s.max_instances), 'the autoscaler chooses from '),
    ...(s.sleeps === false ? { sleep: 'never: the app has workers, which run in its instances (its minimum is 1 in effect)' } : {}),
    workers: workersLine(s),
    flavor: range(`${s.flavor} (${humanSize(s.memory_bytes)})`, s.min_flavor, s.max_flavor, 'the autoscaler chooses from '),
    'build flavor': `${s.build_flavor} (${humanSize(s.build_memory_bytes)})`,
    disk: humanSize(s.disk_budget_bytes),
    autoscaling: s.autoscaling,
  };
}

/** "2 worker instances running (the autoscaler chooses from 1 to 3)", or where the workers run without a range. */
function workersLine(s: ScaleView): string {
  const w = s.workers;
  if (!w) return 'beside each instance (no range of their own)';
  const running = w.running.length === w.count ? '' : `, ${w.running.length} running`;
  const count = `${w.count} worker instance${w.count === 1 ? '' : 's'}${running}`;
  return range(count, String(w.min), String(w.max), 'the autoscaler chooses from ');
}

/**
 * The latest decisions, newest first: "2026-11-29 05:40:12  3 → 4 instances: CPU 85% of 3
 * instances for 8 s", or for a flavour "… nano → XS: memory 93% of nano (512 MiB) for 6 s".
 */
export function decisionLines(s: ScaleView): string[] {
  return s.decisions.map((d) => {
    const change =
      d.from_flavor && d.to_flavor
        ? `${d.from_flavor} → ${d.to_flavor}`
        : `${d.from} → ${d.to} ${d.target === 'workers' ? 'workers' : 'instances'}`;
    return `${d.at.slice(0, 19).replace('T', ' ')}  ${change}: ${d.reason}${d.outcome === 'failed' ? ' (failed)' : ''}`;
  });
}
