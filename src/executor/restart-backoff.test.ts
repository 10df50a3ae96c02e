import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffDelay, RestartBackoff } from './restart-backoff.js';

test('doubles from 1 s up to 30 s for a crash loop', () => {
  const b = new RestartBackoff();
  const delays = Array.from({ length: 8 }, () => b.nextDelay(100));
  assert.deepEqual(delays, [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
});

test('starts over after an instance stayed up for 60 s', () => {
  const b = new RestartBackoff();
  b.nextDelay(0);
  b.nextDelay(0);
  assert.equal(b.nextDelay(59_000), 4000);
  assert.equal(b.nextDelay(60_000), 1000);
  assert.equal(b.nextDelay(10), 2000);
});

test('honours a custom policy', () => {
  const b = new RestartBackoff({ initialMs: 100, maxMs: 250, resetAfterMs: 1000 });
  assert.deepEqual([b.nextDelay(0), b.nextDelay(0), b.nextDelay(0)], [100, 200, 250]);
});

test('a back-off may restart at once the first times in a row', () => {
  const policy = { initialMs: 250, maxMs: 5000, immediate: 2 };
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 6, 9].map((n) => backoffDelay(n, policy)),
    [0, 0, 250, 500, 1000, 2000, 4000, 5000],
  );
});
