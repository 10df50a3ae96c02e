import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTokenLifetime } from './token-lifetime.js';

test('token lifetimes are seconds, minutes, hours, days, weeks or years', () => {
  assert.equal(parseTokenLifetime('45s'), 45);
  assert.equal(parseTokenLifetime('90m'), 5400);
  assert.equal(parseTokenLifetime('12h'), 43_200);
  assert.equal(parseTokenLifetime('30d'), 2_592_000);
  assert.equal(parseTokenLifetime('2w'), 1_209_600);
  assert.equal(parseTokenLifetime('1y'), 31_536_000);
});

test('anything else is refused with the forms accepted', () => {
  for (const bad of ['30', '1 month', 'd', '-5d', '0s', '10ms', ''])
    assert.throws(() => parseTokenLifetime(bad), /--expires takes a lifetime such as 30s, 90m/);
});
