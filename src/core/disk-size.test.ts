import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  budgetExceededMessage,
  budgetExhausted,
  parseDiskBudget,
  parseDiskSize,
  pushAllowance,
  pushTooLargeMessage,
  spaceIsShort,
} from './disk-size.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

test('sizes are read the way operators type them, in powers of 1024', () => {
  assert.equal(parseDiskSize('64M'), 64 * MiB);
  assert.equal(parseDiskSize('2G'), 2 * GiB);
  assert.equal(parseDiskSize('2GiB'), 2 * GiB);
  assert.equal(parseDiskSize('512 mib'), 512 * MiB);
  assert.equal(parseDiskSize('1.5G'), 1.5 * GiB);
  assert.equal(parseDiskSize('4096'), 4096);
  assert.equal(parseDiskSize('1T'), 1024 * GiB);
  for (const bad of ['', 'G', '-1G', '2 gigs', '1e9', '2G2']) {
    assert.throws(() => parseDiskSize(bad), /is not a size/, bad);
  }
});

test('a budget is checked against its bounds and rounded up to whole MiB', () => {
  assert.equal(parseDiskBudget('2G'), 2 * GiB);
  assert.equal(parseDiskBudget(String(64 * MiB + 1)), 65 * MiB);
  assert.throws(() => parseDiskBudget('1M'), /A disk budget of 1 MiB is outside what slipway accepts \(32 MiB to 16 TiB\)/);
  assert.throws(() => parseDiskBudget('17T'), /outside what slipway accepts/);
});

test('a push may take what is free less a margin for git and the export, never below zero', () => {
  assert.equal(pushAllowance({ budgetBytes: 2 * GiB, usedBytes: GiB, freeBytes: GiB }), GiB - 8 * MiB);
  assert.equal(pushAllowance({ budgetBytes: 64 * MiB, usedBytes: 10 * MiB, freeBytes: 50 * MiB }), 46 * MiB);
  assert.equal(pushAllowance({ budgetBytes: 64 * MiB, usedBytes: 63 * MiB, freeBytes: MiB }), 0);
});

test('a filesystem near full is the budget exhausted; less than a quarter free is short', () => {
  const budget = 2 * GiB;
  assert.equal(budgetExhausted({ budgetBytes: budget, usedBytes: budget, freeBytes: 4096 }), true);
  assert.equal(budgetExhausted({ budgetBytes: budget, usedBytes: budget - 100 * MiB, freeBytes: 100 * MiB }), false);
  assert.equal(budgetExhausted({ budgetBytes: 64 * MiB, usedBytes: 63 * MiB, freeBytes: MiB }), true);
  assert.equal(spaceIsShort({ budgetBytes: budget, usedBytes: 1.6 * GiB, freeBytes: 0.4 * GiB }), true);
  assert.equal(spaceIsShort({ budgetBytes: budget, usedBytes: GiB, freeBytes: GiB }), false);
});

test('the messages name the budget, the use and what to do', () => {
  assert.equal(
    budgetExceededMessage({ budgetBytes: 2 * GiB, usedBytes: 2 * GiB, freeBytes: 0 }),
    "disk budget of 2 GiB exceeded: the app's repository, build, caches and kept releases use 2 GiB of it.",
  );
  const [first, second] = pushTooLargeMessage({ budgetBytes: 64 * MiB, usedBytes: 10 * MiB, freeBytes: 54 * MiB }, 50 * MiB);
  assert.equal(first, "slipway: push refused: it is larger than the 50 MiB left in this app's disk budget of 64 MiB (10 MiB used).");
  assert.match(second!, /nothing of it was kept.*slipway scale --disk <size>/);
});
