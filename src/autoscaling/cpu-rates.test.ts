import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CpuRates } from './cpu-rates.js';

test('CPU time read twice becomes a rate in % of one core, averaged over the instances', () => {
  const rates = new CpuRates();
  assert.equal(
    rates.average(
      [
        { id: 'a', seconds: 10 },
        { id: 'b', seconds: 3 },
      ],
      1000,
    ),
    undefined,
  );
  // a used 1.8 s of CPU in 2 s (90%), b 0.2 s (10%).
  assert.equal(
    rates
      .average(
        [
          { id: 'a', seconds: 11.8 },
          { id: 'b', seconds: 3.2 },
        ],
        3000,
      )
      ?.toFixed(6),
    '50.000000',
  );
});

test('a new instance, a restarted one and an unmeasured one have no rate yet', () => {
  const rates = new CpuRates();
  rates.average([{ id: 'a', seconds: 5 }], 0);
  // a restarted: its count went back; c is new; d is not measured.
  const reading = [
    { id: 'a', seconds: 1 },
    { id: 'c', seconds: 4 },
    { id: 'd', seconds: undefined },
  ];
  assert.equal(rates.average(reading, 2000), undefined);
  assert.equal(
    rates
      .average(
        [
          { id: 'a', seconds: 2 },
          { id: 'c', seconds: 4.5 },
        ],
        4000,
      )
      ?.toFixed(6),
    '37.500000',
  );
});
