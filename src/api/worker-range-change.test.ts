import { test } from 'node:test';
import assert from 'node:assert/strict';
import { workerRangeChange } from './worker-range-change.js';

const beside = { instances: 2 };
const ranged = { instances: 2, min_workers: 1, max_workers: 3, worker_instances: 2 };

test('a range of workers, a fixed count, and default to go back beside each instance', () => {
  assert.equal(workerRangeChange(beside, {}), undefined);
  assert.deepEqual(workerRangeChange(beside, { minWorkers: '1', maxWorkers: 3 }), { range: { min: 1, max: 3, count: 1 } });
  assert.deepEqual(workerRangeChange(beside, { workers: '2' }), { range: { min: 2, max: 2, count: 2 } });
  assert.deepEqual(workerRangeChange(ranged, { workers: 'default' }), { range: null });
  assert.deepEqual(workerRangeChange(ranged, { workers: ' Default ' }), { range: null });
  // The count now moves inside the new range; a bound given alone keeps the other.
  assert.deepEqual(workerRangeChange(ranged, { maxWorkers: 5 }), { range: { min: 1, max: 5, count: 2 } });
  assert.deepEqual(workerRangeChange(ranged, { minWorkers: 3 }), { range: { min: 3, max: 3, count: 3 } });
  assert.deepEqual(workerRangeChange(beside, { maxWorkers: 4 }), { range: { min: 1, max: 4, count: 1 } });
  assert.deepEqual(workerRangeChange(ranged, { workers: 3, minWorkers: 3, maxWorkers: '3' }), { range: { min: 3, max: 3, count: 3 } });
});

test('a bad count or range is refused, saying what to give', () => {
  assert.throws(() => workerRangeChange(beside, { workers: 0 }), /worker instances is a whole number from 1 to 40, not 0/);
  assert.throws(() => workerRangeChange(beside, { maxWorkers: '41' }), /from 1 to 40/);
  assert.throws(() => workerRangeChange(beside, { minWorkers: 'two' }), /fewest worker instances is a whole number/);
  assert.throws(
    () => workerRangeChange(beside, { minWorkers: 4, maxWorkers: 2 }),
    /minimum of worker instances \(4\) is over the maximum \(2\)/,
  );
  assert.throws(() => workerRangeChange(beside, { workers: 2, maxWorkers: 3 }), /--workers sets a fixed count/);
  assert.throws(() => workerRangeChange(beside, { workers: 'default', maxWorkers: 3 }), /cannot be given with --min-workers/);
});
