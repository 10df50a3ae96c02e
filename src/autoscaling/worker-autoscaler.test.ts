import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LoadSample } from './decide.js';
import { DEFAULT_AUTOSCALING } from './settings.js';
import { decideWorkers, workerDecisionLine } from './worker-autoscaler.js';
import { workerRangeOf } from '../core/scaling-ranges.js';

const settings = { ...DEFAULT_AUTOSCALING, outAfterMs: 6000, inAfterMs: 10_000, cooldownMs: 2000 };

/** Samples every 2 s up to `untilMs` at `running` worker instances, each at `cpu` % of one core. */
function series(running: number, cpu: number | undefined, untilMs: number): LoadSample[] {
  const out: LoadSample[] = [];
  for (let t = 2000; t <= untilMs; t += 2000) {
    out.push({ from: t - 2000, at: t, instances: running, ...(cpu === undefined ? {} : { cpuPercent: cpu }), queued: 0, inflight: 0 });
  }
  return out;
}

test('saturated workers scale out inside the range, and the decision says worker instances', () => {
  const range = { min: 1, max: 3, count: 1, running: 1 };
  assert.equal(decideWorkers(series(1, 95, 4000), settings, range, 4000), undefined, 'not before out-after');
  const out = decideWorkers(series(1, 95, 8000), settings, range, 8000);
  assert.deepEqual(out && { from: out.from, to: out.to, direction: out.direction }, { from: 1, to: 2, direction: 'up' });
  assert.equal(out?.reason, 'CPU 95% of 1 worker instance for 8 s');
  assert.equal(workerDecisionLine(out!), '1 → 2 workers: CPU 95% of 1 worker instance for 8 s');
  // Never past the maximum, whatever the load.
  const many = decideWorkers(series(2, 400, 8000), settings, { ...range, count: 2, running: 2 }, 8000);
  assert.equal(many?.to, 3);
  assert.equal(decideWorkers(series(3, 100, 8000), settings, { ...range, count: 3, running: 3 }, 8000), undefined);
});

test('idle workers scale in one at a time, never under the minimum nor to 0', () => {
  const two = decideWorkers(series(2, 2, 12_000), settings, { min: 1, max: 3, count: 2, running: 2 }, 12_000);
  assert.deepEqual(two && [two.direction, two.from, two.to], ['down', 2, 1]);
  assert.match(two!.reason, /^CPU 2% of 2 worker instances for 12 s \(under 30% on 1\)$/);
  assert.equal(decideWorkers(series(1, 0, 60_000), settings, { min: 1, max: 3, count: 1, running: 1 }, 60_000), undefined);
  // Unmeasured CPU (a backend without the workers' figures) decides nothing.
  assert.equal(decideWorkers(series(2, undefined, 60_000), settings, { min: 1, max: 3, count: 2, running: 2 }, 60_000), undefined);
});

test('a steady load never scales the workers out then in, and the cool-down holds samples back', () => {
  for (let cpu = 0; cpu <= 100; cpu += 5) {
    const samples = series(2, cpu, 60_000);
    const decision = decideWorkers(samples, settings, { min: 1, max: 3, count: 2, running: 2 }, 60_000);
    if (decision?.direction === 'up') {
      const after = decideWorkers(
        series(decision.to, (cpu * 2) / decision.to, 60_000),
        settings,
        { min: 1, max: 3, count: decision.to, running: decision.to },
        60_000,
      );
      assert.notEqual(after?.direction, 'down', `cpu ${cpu}`);
    }
  }
  const cooled = decideWorkers(series(1, 95, 8000), settings, { min: 1, max: 3, count: 1, running: 1, lastChangeAt: 7000 }, 8000);
  assert.equal(cooled, undefined);
});

test('a range outside the count brings it back; no range: none', () => {
  const low = decideWorkers([], settings, { min: 2, max: 3, count: 2, running: 1 }, 1000);
  assert.deepEqual(low && [low.to, low.reason], [2, 'the minimum is 2 worker instances']);
  const high = decideWorkers([], settings, { min: 1, max: 2, count: 2, running: 4 }, 1000);
  assert.deepEqual(high && [high.to, high.reason], [2, 'the maximum is 2 worker instances']);
  assert.equal(workerRangeOf({ instances: 2 }), undefined);
  assert.deepEqual(workerRangeOf({ min_workers: 1, max_workers: 3, worker_instances: 5 }), { min: 1, max: 3, count: 3 });
  assert.deepEqual(workerRangeOf({ min_workers: 2, max_workers: 3, worker_instances: null }), { min: 2, max: 3, count: 2 });
});
