import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TrafficMinutes, WINDOW_MINUTES } from './traffic-minutes.js';

const APP = 'app_00000000-0000-4000-8000-000000000001';
const OTHER = 'app_00000000-0000-4000-8000-000000000002';
const T0 = Date.parse('2024-05-01T12:00:00.000Z');

function at(minutesAfter: number, seconds = 0): Date {
  return new Date(T0 + minutesAfter * 60_000 + seconds * 1000);
}

test('counts requests and 5xx per minute, oldest first, with empty minutes in between', () => {
  let now = T0 + 2 * 60_000 + 30_000;
  const minutes = new TrafficMinutes(() => now);
  for (let i = 0; i < 5; i++) minutes.record({ appId: APP, time: at(0, i), status: 200, durationMs: 3 });
  minutes.record({ appId: APP, time: at(0, 10), status: 502, durationMs: 1 });
  minutes.record({ appId: APP, time: at(2, 5), status: 503, durationMs: 1 });
  minutes.record({ appId: OTHER, time: at(2, 5), status: 200, durationMs: 1 });
  const hour = minutes.lastHour(APP);
  assert.equal(hour.length, WINDOW_MINUTES);
  assert.equal(hour.at(-1)!.minute, '2024-05-01T12:02:00.000Z');
  assert.deepEqual(
    hour.slice(-3).map((m) => [m.requests, m.errors]),
    [
      [6, 1],
      [0, 0],
      [1, 1],
    ],
  );
  assert.equal(hour.at(-2)!.p95_ms, null);
  assert.equal(minutes.lastHour(OTHER).at(-1)!.requests, 1);
  // An hour later the old minutes are gone.
  now += 60 * 60_000;
  assert.equal(
    minutes.lastHour(APP).reduce((n, m) => n + m.requests, 0),
    0,
  );
});

test('p95 is within a quarter of the true value and never above the slowest request', () => {
  const now = T0 + 30_000;
  const minutes = new TrafficMinutes(() => now);
  // 100 requests: 1..100 ms; the 95th is 95 ms.
  for (let ms = 1; ms <= 100; ms++) minutes.record({ appId: APP, time: at(0, 1), status: 200, durationMs: ms });
  const p95 = minutes.lastHour(APP).at(-1)!.p95_ms!;
  assert.ok(p95 >= 95 && p95 <= 95 * 1.25, `p95 ${p95}`);
  const single = new TrafficMinutes(() => now);
  single.record({ appId: APP, time: at(0, 1), status: 200, durationMs: 7 });
  assert.equal(single.lastHour(APP).at(-1)!.p95_ms, 7);
});

test('records outside the hour are ignored and a forgotten app has no figures', () => {
  const now = T0 + 30_000;
  const minutes = new TrafficMinutes(() => now);
  minutes.record({ appId: APP, time: at(-61), status: 200, durationMs: 1 });
  minutes.record({ appId: APP, time: at(5), status: 200, durationMs: 1 });
  assert.equal(
    minutes.lastHour(APP).reduce((n, m) => n + m.requests, 0),
    0,
  );
  minutes.record({ appId: APP, time: at(0), status: 200, durationMs: 1 });
  minutes.forget(APP);
  assert.equal(
    minutes.lastHour(APP).reduce((n, m) => n + m.requests, 0),
    0,
  );
});
