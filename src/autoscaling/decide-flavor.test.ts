import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LoadSample } from './decide.js';
import { decideFlavor, type FlavorState } from './decide-flavor.js';
import { DEFAULT_AUTOSCALING } from './settings.js';

const SAMPLE_MS = 2000;

/** `count` samples of 2 s ending at `count` × 2 s, of `instances` instances with these figures. */
function series(count: number, figures: Partial<LoadSample>, instances = 1): LoadSample[] {
  return Array.from({ length: count }, (_, k) => ({
    from: k * SAMPLE_MS,
    at: (k + 1) * SAMPLE_MS,
    instances,
    queued: 0,
    inflight: 0,
    ...figures,
  }));
}

const nanoToM: FlavorState = { flavor: 'nano', minFlavor: 'pico', maxFlavor: 'M' };
const one = { instances: 1, minInstances: 1, maxInstances: 1 };

test('memory near its limit for out-after grows the flavour by one step, whatever the count', () => {
  const d = decideFlavor(series(3, { memoryPercent: 93, cpuPercent: 10 }), DEFAULT_AUTOSCALING, { ...one, ...nanoToM }, 6000);
  assert.deepEqual(d, {
    direction: 'up',
    from: 1,
    to: 1,
    flavor: { from: 'nano', to: 'XS' },
    cause: 'memory',
    reason: 'memory 93% of nano (512 MiB) for 6 s',
  });
  const many = decideFlavor(
    series(3, { memoryPercent: 95 }, 3),
    DEFAULT_AUTOSCALING,
    { instances: 3, minInstances: 1, maxInstances: 5, ...nanoToM },
    6000,
  );
  assert.equal(many?.cause, 'memory');
  // Not long enough, or at the largest flavour of the range: nothing.
  assert.equal(decideFlavor(series(2, { memoryPercent: 95 }), DEFAULT_AUTOSCALING, { ...one, ...nanoToM }, 4000), undefined);
  assert.equal(
    decideFlavor(series(5, { memoryPercent: 95 }), DEFAULT_AUTOSCALING, { ...one, flavor: 'M', minFlavor: 'pico', maxFlavor: 'M' }, 10_000),
    undefined,
  );
});

test('CPU that cannot be spread (the count at its maximum) grows the flavour; below the maximum it is the count that grows', () => {
  const busy = series(3, { cpuPercent: 97, memoryPercent: 20 });
  assert.deepEqual(
    decideFlavor(busy, DEFAULT_AUTOSCALING, { ...one, ...nanoToM }, 6000)?.reason,
    'CPU 97% of 1 instance for 6 s, at the maximum count',
  );
  assert.equal(decideFlavor(busy, DEFAULT_AUTOSCALING, { ...one, maxInstances: 3, ...nanoToM }, 6000), undefined);
});

test('low memory and CPU at the minimum count shrink the flavour after in-after; above the minimum they do not', () => {
  // 20% of XS (1 GiB) is 40% of nano: under mem-in (50%).
  const low = series(30, { memoryPercent: 20, cpuPercent: 5 });
  const xs = { ...one, flavor: 'XS', minFlavor: 'pico', maxFlavor: 'M' };
  assert.deepEqual(decideFlavor(low, DEFAULT_AUTOSCALING, xs, 60_000), {
    direction: 'down',
    from: 1,
    to: 1,
    flavor: { from: 'XS', to: 'nano' },
    cause: 'low',
    reason: 'memory 40% of nano (512 MiB) and CPU under 30% for 60 s',
  });
  assert.equal(
    decideFlavor(low, DEFAULT_AUTOSCALING, { ...xs, minFlavor: 'XS' }, 60_000),
    undefined,
    'at the smallest flavour of the range',
  );
  assert.equal(
    decideFlavor(low, DEFAULT_AUTOSCALING, { ...xs, maxInstances: 3, instances: 2 }, 60_000),
    undefined,
    'the count shrinks first',
  );
  // 30% of XS is 60% of nano: over mem-in, it stays.
  assert.equal(decideFlavor(series(30, { memoryPercent: 30, cpuPercent: 5 }), DEFAULT_AUTOSCALING, xs, 60_000), undefined);
});

test('a steady memory use never changes the flavour up and then down again', () => {
  for (const usedMiB of [100, 200, 230, 240, 300, 460, 470, 600, 900, 1000]) {
    let state = { ...one, flavor: 'pico', minFlavor: 'pico', maxFlavor: 'M', lastChangeAt: undefined as number | undefined };
    const changes: string[] = [];
    const samples: LoadSample[] = [];
    for (let t = SAMPLE_MS; t <= 3600_000; t += SAMPLE_MS) {
      const limitMiB = { pico: 256, nano: 512, XS: 1024, S: 2048, M: 4096 }[state.flavor]!;
      samples.push({
        from: t - SAMPLE_MS,
        at: t,
        instances: 1,
        queued: 0,
        inflight: 0,
        cpuPercent: 5,
        memoryPercent: (100 * usedMiB) / limitMiB,
      });
      const d = decideFlavor(samples, { ...DEFAULT_AUTOSCALING, inAfterMs: 10_000 }, state, t);
      if (d?.flavor) {
        changes.push(`${d.flavor.from}->${d.flavor.to}`);
        state = { ...state, flavor: d.flavor.to, lastChangeAt: t };
      }
    }
    const downs = changes.filter((c) => ['nano->pico', 'XS->nano', 'S->XS', 'M->S'].includes(c));
    assert.deepEqual(downs, [], `${usedMiB} MiB: ${changes.join(', ')}`);
  }
});
