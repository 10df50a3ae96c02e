import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseLines, parseSince, windowQuery } from './log-window.js';

const now = Date.parse('2024-05-01T12:00:00.000Z');

test('--since takes durations back from now', () => {
  assert.equal(parseSince('90s', now), '2024-05-01T11:58:30.000Z');
  assert.equal(parseSince('15m', now), '2024-05-01T11:45:00.000Z');
  assert.equal(parseSince('2h', now), '2024-05-01T10:00:00.000Z');
  assert.equal(parseSince('1d', now), '2024-04-30T12:00:00.000Z');
});

test('--since takes a time, normalized to UTC', () => {
  assert.equal(parseSince('2024-05-01T14:00:00+02:00', now), '2024-05-01T12:00:00.000Z');
  assert.equal(parseSince('2024-05-01', now), '2024-05-01T00:00:00.000Z');
});

test('--since refuses anything else and says what it takes', () => {
  for (const bad of ['yesterday', '10', '5w', '', 'T12:00']) {
    assert.throws(() => parseSince(bad, now), /a duration back from now such as 90s.*or a time such as/);
  }
});

test('--lines is a whole number', () => {
  assert.equal(parseLines('0'), 0);
  assert.equal(parseLines('250'), 250);
  assert.throws(() => parseLines('-1'), /whole number/);
  assert.throws(() => parseLines('1e3'), /whole number/);
});

test('the window becomes the query of the log request', () => {
  assert.equal(windowQuery({}), '');
  assert.equal(windowQuery({ lines: 5 }), '?lines=5');
  assert.equal(windowQuery({ lines: 5, since: '2024-05-01T12:00:00.000Z' }), '?lines=5&since=2024-05-01T12%3A00%3A00.000Z');
});
