import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_BUN_VERSION,
  DEFAULT_NODE_VERSION,
  DEFAULT_NPM_VERSION,
  DEFAULT_YARN1_VERSION,
  isEndOfLife,
  NODE_RELEASE_LINES,
  nodeLtsMajors,
  nodeMajorForCodename,
} from './node-releases.js';

const LATE_2026 = new Date('2026-11-21T12:00:00Z');

test('the documented defaults', () => {
  assert.equal(DEFAULT_NODE_VERSION, '24.11.0');
  assert.equal(DEFAULT_NPM_VERSION, '11.6.1');
  assert.equal(DEFAULT_BUN_VERSION, '1.3.1');
  assert.equal(DEFAULT_YARN1_VERSION, '1.22.22');
});

test('the schedule covers majors 18 to 26 with the reference end-of-life dates', () => {
  assert.deepEqual(
    NODE_RELEASE_LINES.map((l) => l.major),
    [18, 19, 20, 21, 22, 23, 24, 25, 26],
  );
  const eol = Object.fromEntries(NODE_RELEASE_LINES.map((l) => [l.major, l.endOfLife]));
  assert.equal(eol[18], '2025-04-30');
  assert.equal(eol[20], '2026-04-30');
  assert.equal(eol[22], '2027-04-30');
  assert.equal(eol[24], '2028-04-30');
  assert.equal(eol[25], '2026-06-01');
  assert.equal(eol[26], '2029-04-30');
});

test('node end of life in late 2026 matches the reference table', () => {
  const expected: Record<string, boolean> = {
    '16.20.2': true,
    '18.20.8': true,
    '19.9.0': true,
    '20.20.2': true,
    '21.7.3': true,
    '22.15.1': false,
    '23.11.1': true,
    '24.11.0': false,
    '25.9.0': true,
    '26.10.0': false,
    '27.0.0': false,
  };
  for (const [version, eol] of Object.entries(expected)) {
    assert.equal(isEndOfLife('node', version, LATE_2026), eol, version);
  }
});

test('a node line is supported through its last day and end of life the day after', () => {
  assert.equal(isEndOfLife('node', '20.20.2', new Date('2026-04-30T23:59:00Z')), false);
  assert.equal(isEndOfLife('node', '20.20.2', new Date('2026-05-01T00:00:00Z')), true);
});

test('v-prefixed versions are accepted, anything else is refused', () => {
  assert.equal(isEndOfLife('node', 'v18.0.0', LATE_2026), true);
  assert.throws(() => isEndOfLife('node', '24', LATE_2026), /not an exact version/);
});

test('LTS majors depend on the date', () => {
  assert.deepEqual(nodeLtsMajors(LATE_2026), [26, 24, 22]);
  assert.deepEqual(nodeLtsMajors(new Date('2026-07-01T00:00:00Z')), [24, 22]);
  assert.deepEqual(nodeLtsMajors(new Date('2025-01-01T00:00:00Z')), [22, 20, 18]);
  assert.equal(nodeMajorForCodename('Jod'), 22);
  assert.equal(nodeMajorForCodename('nope'), undefined);
});

test('bun: minors older than the latest two are end of life', () => {
  const published = ['1.1.45', '1.2.0', '1.2.23', '1.3.0', '1.3.14', '1.4.0', '1.4.5', '1.5.0-canary.1'];
  assert.equal(isEndOfLife('bun', '1.4.5', LATE_2026, published), false);
  assert.equal(isEndOfLife('bun', '1.3.1', LATE_2026, published), false);
  assert.equal(isEndOfLife('bun', '1.2.23', LATE_2026, published), true);
  assert.equal(isEndOfLife('bun', '1.1.45', LATE_2026, published), true);
  assert.equal(isEndOfLife('bun', '0.8.1', LATE_2026, published), true);
});

test('bun without a version list measures against the default version', () => {
  assert.equal(isEndOfLife('bun', '1.3.1'), false);
  assert.equal(isEndOfLife('bun', '1.2.0'), false);
  assert.equal(isEndOfLife('bun', '1.1.0'), true);
});
