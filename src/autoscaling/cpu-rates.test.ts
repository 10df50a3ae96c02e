import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CpuRates } from './cpu-rates.js';

const percent = (value: number | undefined) => value?.toFixed(6);

test('CPU time read twice becomes a rate in % of one core, averaged over the instances', () => {
  const rates = new CpuRates();
  const first = [
    { id: 'a', seconds: 10, at: 1000 },
    { id: 'b', seconds: 3, at: 1000 },
  ];
  assert.equal(rates.average(first), undefined);
  // a used 1.8 s of CPU in 2 s (90%), b 0.2 s (10%).
  const second = [
    { id: 'a', seconds: 11.8, at: 3000 },
    { id: 'b', seconds: 3.2, at: 3000 },
  ];
  assert.equal(percent(rates.average(second)), '50.000000');
});

test('a new instance, a restarted one and an unmeasured one have no rate yet', () => {
  const rates = new CpuRates();
  rates.average([{ id: 'a', seconds: 5, at: 0 }]);
  // a restarted: its count went back; c is new; d is not measured.
  const reading = [
    { id: 'a', seconds: 1, at: 2000 },
    { id: 'c', seconds: 4, at: 2000 },
    { id: 'd', seconds: undefined, at: 2000 },
  ];
  assert.equal(rates.average(reading), undefined);
  const next = [
    { id: 'a', seconds: 2, at: 4000 },
    { id: 'c', seconds: 4.5, at: 4000 },
  ];
  assert.equal(percent(rates.average(next)), '37.500000');
});

test('rates go by the time each reading was taken; a reading not renewed keeps its last rate', () => {
  const rates = new CpuRates();
  rates.average([{ id: 'polled', seconds: 1, at: 10_000 }]);
  // Read 3 s later, although sampled 2 s later: 1.5 s of CPU in 3 s.
  assert.equal(percent(rates.average([{ id: 'polled', seconds: 2.5, at: 13_000 }])), '50.000000');
  // No new reading since: the same rate, not 0.
  assert.equal(percent(rates.average([{ id: 'polled', seconds: 2.5, at: 13_000 }])), '50.000000');
  assert.equal(percent(rates.average([{ id: 'polled', seconds: 2.6, at: 14_000 }])), '10.000000');
});
