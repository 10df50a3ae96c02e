import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acmeRetryDelayMs } from './acme-backoff.js';

test('failed ACME orders wait 15 minutes, then twice as long each time: an hour after the third, at most a day', () => {
  const minutes = [1, 2, 3, 4, 20].map((failures) => acmeRetryDelayMs(failures) / 60_000);
  assert.deepEqual(minutes, [15, 30, 60, 120, 24 * 60]);
  assert.equal(acmeRetryDelayMs(2, 3000), 6000);
});
