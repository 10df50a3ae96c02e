import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Scale } from './browser/api.js';
import { formOf, type ScaleForm, scaleRequest } from './browser/scale-request.js';
import { decisionLine, instancesSummary, savedMessage, workersSummary } from './browser/scale-text.js';

/** A fixed app: 1 instance of nano, workers beside each instance. */
function scale(over: Partial<Scale> = {}): Scale {
  return {
    instances: 1,
    flavor: 'nano',
    memory_bytes: 512 * 1024 * 1024,
    build_flavor: 'S',
    build_memory_bytes: 2 * 1024 * 1024 * 1024,
    disk_budget_bytes: 1024 * 1024 * 1024,
    min_instances: 1,
    max_instances: 1,
    min_flavor: 'nano',
    max_flavor: 'nano',
    autoscaling: 'cpu-out=80',
    asleep_since: null,
    workers: null,
    decisions: [],
    ...over,
  };
}

const form = (saved: Scale, over: Partial<ScaleForm>): ScaleForm => ({ ...formOf(saved), ...over });

test('the form of a fixed scaling leaves every "up to" empty: changing one value keeps it fixed', () => {
  const saved = scale();
  assert.deepEqual(formOf(saved), {
    count: '1',
    upTo: '',
    flavorFrom: 'nano',
    flavorUpTo: '',
    workersRun: 'beside',
    workerCount: '1',
    workersUpTo: '',
  });
  assert.deepEqual(scaleRequest(formOf(saved), saved), { ok: true, body: {} });
  assert.deepEqual(scaleRequest(form(saved, { count: '3', flavorFrom: 'pico' }), saved), {
    ok: true,
    body: { instances: 3, flavor: 'pico' },
  });
});

test('a flavour range is sent as minFlavor and maxFlavor; the same flavour twice is a fixed one', () => {
  const saved = scale();
  assert.deepEqual(scaleRequest(form(saved, { flavorFrom: 'pico', flavorUpTo: 'S' }), saved), {
    ok: true,
    body: { minFlavor: 'pico', maxFlavor: 'S' },
  });
  const ranged = scale({ min_flavor: 'pico', max_flavor: 'S' });
  assert.deepEqual(formOf(ranged).flavorUpTo, 'S');
  assert.deepEqual(scaleRequest(formOf(ranged), ranged), { ok: true, body: {} });
  assert.deepEqual(scaleRequest(form(ranged, { flavorFrom: 'XS', flavorUpTo: 'XS' }), ranged), { ok: true, body: { flavor: 'XS' } });
  assert.deepEqual(scaleRequest(form(ranged, { flavorUpTo: '' }), ranged), { ok: true, body: { flavor: 'pico' } });
});

test('a "from" flavour larger than its "up to" is refused, saying what to choose', () => {
  const saved = scale();
  assert.deepEqual(scaleRequest(form(saved, { flavorFrom: 'S', flavorUpTo: 'nano' }), saved), {
    ok: false,
    field: 'flavorUpTo',
    message:
      '"Flavour from" (S) is larger than "Flavour up to" (nano): choose an "up to" of S or larger, or "The same" for a fixed flavour.',
  });
});

test('instance counts: a range, back to fixed, 0 only under an "up to", and an "up to" under the count refused', () => {
  const saved = scale({ instances: 2, min_instances: 2, max_instances: 2 });
  assert.deepEqual(scaleRequest(form(saved, { upTo: '3' }), saved), { ok: true, body: { minInstances: 2, maxInstances: 3 } });
  assert.deepEqual(scaleRequest(form(saved, { upTo: '2' }), saved), { ok: true, body: {} });
  assert.deepEqual(scaleRequest(form(saved, { count: '0', upTo: '2' }), saved), { ok: true, body: { minInstances: 0, maxInstances: 2 } });
  const ranged = scale({ instances: 2, min_instances: 2, max_instances: 3 });
  assert.deepEqual(scaleRequest(form(ranged, { upTo: '' }), ranged), { ok: true, body: { instances: 2 } });

  const zero = scaleRequest(form(saved, { count: '0' }), saved);
  assert.ok(!zero.ok && zero.field === 'count' && zero.message.startsWith('The instance count is a whole number from 1 to 40'));
  const over = scaleRequest(form(saved, { count: '41', upTo: '' }), saved);
  assert.ok(!over.ok && over.field === 'count');
  assert.deepEqual(scaleRequest(form(saved, { count: '3', upTo: '2' }), saved), {
    ok: false,
    field: 'upTo',
    message:
      '"Autoscale up to" (2) is under the instance count (3): give 3 or more for the autoscaler to choose, or leave it empty for a fixed count.',
  });
});

test('workers: a range of their own, a fixed number, back beside each instance, and bad numbers refused', () => {
  const beside = scale();
  assert.deepEqual(scaleRequest(form(beside, { workersRun: 'apart', workerCount: '1', workersUpTo: '3' }), beside), {
    ok: true,
    body: { minWorkers: 1, maxWorkers: 3 },
  });
  assert.deepEqual(scaleRequest(form(beside, { workersRun: 'apart', workerCount: '2' }), beside), { ok: true, body: { workers: 2 } });
  // Typed counts do not matter while the workers stay beside each instance.
  assert.deepEqual(scaleRequest(form(beside, { workerCount: 'x' }), beside), { ok: true, body: {} });

  const apart = scale({ workers: { min: 1, max: 3, count: 2, running: [] } });
  assert.deepEqual(formOf(apart), { ...formOf(beside), workersRun: 'apart', workerCount: '1', workersUpTo: '3' });
  assert.deepEqual(scaleRequest(formOf(apart), apart), { ok: true, body: {} });
  assert.deepEqual(scaleRequest(form(apart, { workersRun: 'beside' }), apart), { ok: true, body: { workers: 'default' } });
  assert.deepEqual(scaleRequest(form(apart, { workersUpTo: '' }), apart), { ok: true, body: { workers: 1 } });

  const none = scaleRequest(form(beside, { workersRun: 'apart', workerCount: '0' }), beside);
  assert.deepEqual(none, { ok: false, field: 'workerCount', message: 'The number of worker instances is a whole number from 1 to 40.' });
  assert.deepEqual(scaleRequest(form(beside, { workersRun: 'apart', workerCount: '3', workersUpTo: '2' }), beside), {
    ok: false,
    field: 'workersUpTo',
    message:
      '"Workers up to" (2) is under the number of worker instances (3): give 3 or more for the autoscaler to choose, or leave it empty for a fixed number.',
  });
});

test('the summary names the ranges of instances, flavours and workers, and workers in the decisions', () => {
  assert.equal(instancesSummary(scale({ instances: 2, min_instances: 2, max_instances: 2 })), 'A fixed count of 2.');
  assert.equal(
    instancesSummary(scale({ instances: 2, min_instances: 1, max_instances: 3, min_flavor: 'pico', max_flavor: 'S' })),
    '2 now; the autoscaler chooses from 1 to 3. Flavour nano now; the autoscaler chooses from pico to S.',
  );
  assert.equal(workersSummary(scale()), null);
  const running = [{ id: 'i1', state: 'running' as const }];
  assert.equal(
    workersSummary(scale({ workers: { min: 1, max: 3, count: 2, running } })),
    'Workers: 2 worker instances now, 1 running; the autoscaler chooses from 1 to 3.',
  );
  assert.equal(workersSummary(scale({ workers: { min: 1, max: 1, count: 1, running } })), 'Workers: a fixed 1 worker instance, 1 running.');
  const decision = {
    at: '2026-11-29T05:40:12.000Z',
    direction: 'up' as const,
    from: 1,
    to: 2,
    from_flavor: null,
    to_flavor: null,
    reason: 'CPU 92% of 1 worker instance for 6 s',
    outcome: 'done' as const,
    target: 'workers' as const,
  };
  assert.equal(decisionLine(decision), '2026-11-29 05:40:12: 1 → 2 workers: CPU 92% of 1 worker instance for 6 s');
});

test('the saved message says what was saved and what applies later', () => {
  const before = scale();
  assert.equal(
    savedMessage({ instances: 2, flavor: 'pico' }, before, scale({ instances: 2, min_instances: 2, max_instances: 2, flavor: 'pico' })),
    'Saved: 2 instances of pico; the instance count applied at once; the flavour applies at the next deployment or restart. No deployment was started.',
  );
  const note = 'The workers move at the next deployment or `slipway restart`.';
  assert.equal(
    savedMessage(
      { minFlavor: 'pico', maxFlavor: 'S', minWorkers: 1, maxWorkers: 3 },
      before,
      scale({ min_flavor: 'pico', max_flavor: 'S', workers: { min: 1, max: 3, count: 1, running: [] } }),
      note,
    ),
    `Saved: 1 instance of pico to S, the autoscaler choosing from its measured load; the workers run in 1 to 3 worker instances of their own. ${note} No deployment was started.`,
  );
  assert.equal(
    savedMessage({ workers: 'default' }, before, before),
    'Saved: 1 instance of nano; the workers run beside each instance. No deployment was started.',
  );
});
