import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dueTimes, minuteOf, nextTime, parseSchedule } from './schedule.js';

const at = (iso: string) => new Date(iso);

test('the next time is strictly after the given one, in UTC', () => {
  assert.equal(nextTime('* * * * *', at('2026-11-26T12:00:00.000Z')).toISOString(), '2026-11-26T12:01:00.000Z');
  assert.equal(nextTime('* * * * *', at('2026-11-26T12:00:30.000Z')).toISOString(), '2026-11-26T12:01:00.000Z');
  assert.equal(nextTime('30 2 * * *', at('2026-11-26T12:00:00.000Z')).toISOString(), '2026-11-27T02:30:00.000Z');
});

test('day of month and day of week together mean either, as crontab does', () => {
  // 30 November 2026 is a Monday; 1 December the first of the month.
  const { times } = dueTimes('0 12 1 * 1', at('2026-11-26T00:00:00Z'), at('2026-12-08T00:00:00Z'));
  assert.deepEqual(
    times.map((t) => t.toISOString()),
    ['2026-11-30T12:00:00.000Z', '2026-12-01T12:00:00.000Z', '2026-12-07T12:00:00.000Z'],
  );
});

test('due times lie in (after, upTo], counted beyond the limit', () => {
  const { times, count } = dueTimes('* * * * *', at('2026-11-26T12:00:00Z'), at('2026-11-26T12:03:00Z'));
  assert.deepEqual(
    times.map((t) => t.toISOString()),
    ['2026-11-26T12:01:00.000Z', '2026-11-26T12:02:00.000Z', '2026-11-26T12:03:00.000Z'],
  );
  assert.equal(count, 3);
  const many = dueTimes('* * * * *', at('2026-11-26T00:00:00Z'), at('2026-11-27T00:00:00Z'), 10);
  assert.equal(many.times.length, 10);
  assert.equal(many.count, 1440);
  assert.equal(dueTimes('0 0 1 1 *', at('2026-11-26T00:00:00Z'), at('2026-11-27T00:00:00Z')).count, 0);
});

test('7 is Sunday like 0', () => {
  assert.equal(nextTime('0 0 * * 7', at('2026-11-26T00:00:00Z')).toISOString(), '2026-11-29T00:00:00.000Z');
});

test('a schedule needs five fields', () => {
  assert.throws(() => parseSchedule(['*', '*', '*', '*']), /five fields, not 4/);
});

test('minutes start at 0 seconds', () => {
  assert.equal(minuteOf(at('2026-11-26T12:00:59.999Z')).toISOString(), '2026-11-26T12:00:00.000Z');
});
