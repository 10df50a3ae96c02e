import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scalingChange } from './scaling-change.js';

const fixed = { instances: 2, flavor: 'nano' };

test('a range keeps the count inside it, and --instances fixes both bounds', () => {
  assert.deepEqual(scalingChange(fixed, { minInstances: 1, maxInstances: 4 }), {
    ranges: { minInstances: 1, maxInstances: 4, minFlavor: 'nano', maxFlavor: 'nano' },
    current: { instances: 2, flavor: 'nano' },
  });
  assert.equal(scalingChange(fixed, { minInstances: '3', maxInstances: 5 })?.current.instances, 3);
  assert.equal(scalingChange({ ...fixed, instances: 6, min_instances: 1, max_instances: 8 }, { maxInstances: 4 })?.current.instances, 4);
  assert.deepEqual(scalingChange({ ...fixed, min_instances: 1, max_instances: 8 }, { instances: 3 })?.ranges, {
    minInstances: 3,
    maxInstances: 3,
    minFlavor: 'nano',
    maxFlavor: 'nano',
  });
  // The same value for all three is a fixed count, as before ranges existed.
  assert.equal(scalingChange(fixed, { instances: 3, minInstances: 3, maxInstances: 3 })?.current.instances, 3);
  // A bound given alone keeps the other one.
  assert.deepEqual(scalingChange({ ...fixed, min_instances: 2, max_instances: 6 }, { maxInstances: 3 })?.ranges.minInstances, 2);
  assert.equal(scalingChange(fixed, {}), undefined);
});

test('flavour ranges: --flavor fixes both, a range moves the flavour inside it', () => {
  assert.deepEqual(scalingChange(fixed, { minFlavor: 'xs', maxFlavor: 'M' }), {
    ranges: { minInstances: 2, maxInstances: 2, minFlavor: 'XS', maxFlavor: 'M' },
    current: { instances: 2, flavor: 'XS' },
  });
  assert.deepEqual(scalingChange({ ...fixed, min_flavor: 'pico', max_flavor: 'S' }, { flavor: 'S' })?.ranges, {
    minInstances: 2,
    maxInstances: 2,
    minFlavor: 'S',
    maxFlavor: 'S',
  });
});

test('contradictory or reversed ranges are refused with what to give', () => {
  assert.throws(() => scalingChange(fixed, { minInstances: 4, maxInstances: 2 }), /minimum of instances \(4\) is over the maximum \(2\)/);
  assert.throws(() => scalingChange(fixed, { maxInstances: 1, minInstances: 2 }), /over the maximum/);
  assert.throws(() => scalingChange(fixed, { instances: 2, maxInstances: 4 }), /--instances sets a fixed count/);
  assert.throws(() => scalingChange(fixed, { minInstances: -1 }), /whole number from 0 to 40, not -1/);
  assert.throws(() => scalingChange(fixed, { maxInstances: 0 }), /whole number from 1 to 40, not 0/);
  assert.throws(() => scalingChange(fixed, { instances: 0 }), /whole number from 1 to 40, not 0/);
  assert.throws(() => scalingChange(fixed, { maxInstances: 41 }), /whole number from 1 to 40/);
  assert.throws(() => scalingChange(fixed, { minFlavor: 'L', maxFlavor: 'S' }), /smallest flavour \(L\) is larger than the largest \(S\)/);
  assert.throws(() => scalingChange(fixed, { flavor: 'S', maxFlavor: 'M' }), /--flavor sets a fixed flavour/);
  assert.throws(() => scalingChange(fixed, { maxFlavor: 'huge' }), /flavour/i);
});

test('scale to zero: a minimum of 0 is a range whose count stays at least 1 (what the app wakes to)', () => {
  const change = scalingChange(fixed, { minInstances: 0, maxInstances: 3 });
  assert.deepEqual(change?.ranges.minInstances, 0);
  assert.equal(change?.current.instances, 2);
  assert.equal(scalingChange({ ...fixed, instances: 1 }, { minInstances: '0', maxInstances: '1' })?.current.instances, 1);
  assert.throws(() => scalingChange(fixed, { minInstances: 0, instances: 2 }), /--instances sets a fixed count/);
});
