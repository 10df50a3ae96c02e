import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ScaleView } from '../shared/api-types.js';
import { decisionLines, scaleFields, scaleRequestBody } from './scale-format.js';

const MiB = 1024 * 1024;
const view: ScaleView = {
  instances: 2,
  flavor: 'nano',
  memory_bytes: 512 * MiB,
  build_flavor: 'S',
  build_memory_bytes: 2048 * MiB,
  disk_budget_bytes: 2048 * MiB,
  min_instances: 1,
  max_instances: 4,
  min_flavor: 'nano',
  max_flavor: 'nano',
  autoscaling: 'cpu-out=80,cpu-in=30,inflight-out=0,mem-out=90,mem-in=50,out-after=6s,in-after=1m,cooldown=10s,idle-after=15m',
  asleep_since: null,
  workers: null,
  decisions: [
    {
      at: '2026-11-29T05:41:02.000Z',
      direction: 'up',
      from: 2,
      to: 2,
      from_flavor: 'nano',
      to_flavor: 'XS',
      reason: 'memory 93% of nano (512 MiB) for 6 s',
      outcome: 'done',
      target: 'instances',
    },
    {
      at: '2026-11-29T05:40:12.345Z',
      direction: 'up',
      from: 1,
      to: 2,
      from_flavor: null,
      to_flavor: null,
      reason: 'CPU 97% of 1 instance for 6 s',
      outcome: 'done',
      target: 'instances',
    },
    {
      at: '2026-11-29T05:30:00.000Z',
      direction: 'down',
      from: 2,
      to: 1,
      from_flavor: null,
      to_flavor: null,
      reason: 'CPU 3% of 2 instances for 60 s (under 30% on 1)',
      outcome: 'failed',
      target: 'instances',
    },
  ],
};

test('the options become the request as typed; ranges and fixed values alike', () => {
  assert.deepEqual(scaleRequestBody({ 'min-instances': '1', 'max-instances': '4', 'max-flavor': 'S' }), {
    minInstances: '1',
    maxInstances: '4',
    maxFlavor: 'S',
  });
  assert.deepEqual(scaleRequestBody({ instances: '3', flavor: 'XS', autoscaling: 'cpu-out=70', disk: '4G', 'build-flavor': 'M' }), {
    instances: '3',
    flavor: 'XS',
    buildFlavor: 'M',
    autoscaling: 'cpu-out=70',
    disk: '4G',
  });
  assert.deepEqual(scaleRequestBody({}), {});
});

test('the scale prints ranges, the count and flavour now, and the decisions with their reason', () => {
  assert.deepEqual(scaleFields(view), {
    instances: '2 (the autoscaler chooses from 1 to 4)',
    workers: 'beside each instance (no range of their own)',
    flavor: 'nano (512 MiB)',
    'build flavor': 'S (2 GiB)',
    disk: '2 GiB',
    autoscaling: view.autoscaling,
  });
  assert.deepEqual(decisionLines(view), [
    '2026-11-29 05:41:02  nano → XS: memory 93% of nano (512 MiB) for 6 s',
    '2026-11-29 05:40:12  1 → 2 instances: CPU 97% of 1 instance for 6 s',
    '2026-11-29 05:30:00  2 → 1 instances: CPU 3% of 2 instances for 60 s (under 30% on 1) (failed)',
  ]);
  assert.equal(scaleFields({ ...view, min_instances: 2, max_instances: 2 }).instances, '2');
  assert.equal(
    scaleFields({ ...view, min_flavor: 'pico', max_flavor: 'S' }).flavor,
    'nano (512 MiB) (the autoscaler chooses from pico to S)',
  );
});

test('scale to zero: the scale says when the app sleeps, and when it never will', () => {
  const asleep = { ...view, min_instances: 0, max_instances: 2, instances: 1, asleep_since: '2026-11-29T06:10:00.000Z' };
  assert.equal(
    scaleFields(asleep).instances,
    '0, asleep since 2026-11-29 06:10:00 (wakes to 1 at its next request) (the autoscaler chooses from 0 to 2)',
  );
  assert.equal(scaleFields({ ...asleep, asleep_since: null }).instances, '1 (the autoscaler chooses from 0 to 2)');
  assert.equal(scaleFields({ ...asleep, asleep_since: null }).sleep, undefined);
  assert.match(scaleFields({ ...asleep, asleep_since: null, sleeps: false }).sleep ?? '', /^never: the app has workers/);
});

test('workers of their own range: the options, the range and count printed, the decisions saying workers', () => {
  assert.deepEqual(scaleRequestBody({ 'min-workers': '1', 'max-workers': '3' }), { minWorkers: '1', maxWorkers: '3' });
  assert.deepEqual(scaleRequestBody({ workers: 'default' }), { workers: 'default' });
  const ranged: ScaleView = {
    ...view,
    workers: { min: 1, max: 3, count: 2, running: [{ id: 'instance_a', state: 'running' }] },
    decisions: [
      {
        at: '2026-11-29T07:00:00.000Z',
        direction: 'up',
        from: 1,
        to: 2,
        from_flavor: null,
        to_flavor: null,
        reason: 'CPU 92% of 1 worker instance for 6 s',
        outcome: 'done',
        target: 'workers',
      },
    ],
  };
  assert.equal(scaleFields(ranged).workers, '2 worker instances, 1 running (the autoscaler chooses from 1 to 3)');
  assert.equal(scaleFields({ ...ranged, workers: { min: 2, max: 2, count: 2, running: [] } }).workers, '2 worker instances, 0 running');
  assert.deepEqual(decisionLines(ranged), ['2026-11-29 07:00:00  1 → 2 workers: CPU 92% of 1 worker instance for 6 s']);
});
