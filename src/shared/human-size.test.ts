import { test } from 'node:test';
import assert from 'node:assert/strict';
import { humanSize } from './human-size.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

test('sizes are printed with the largest unit that fits, at most one decimal', () => {
  assert.equal(humanSize(2 * GiB), '2 GiB');
  assert.equal(humanSize(1024 * MiB), '1 GiB');
  assert.equal(humanSize(256 * MiB), '256 MiB');
  assert.equal(humanSize(1.5 * GiB), '1.5 GiB');
  assert.equal(humanSize(1536), '1.5 KiB');
  assert.equal(humanSize(900 * 1024), '900 KiB');
  assert.equal(humanSize(15.44 * MiB), '15.4 MiB');
  assert.equal(humanSize(16 * 1024 ** 4), '16 TiB');
  assert.equal(humanSize(12), '12 B');
  assert.equal(humanSize(0), '0 B');
});
