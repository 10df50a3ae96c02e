import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IFNAME_MAX, namesForSlot, slotOfHostVeth, slotOfNamespace, validateBridgeName, validatePrefix } from './netns-names.js';

test('names derive from the slot and fit the interface name limit even at the largest slot', () => {
  assert.deepEqual(namesForSlot('slw', 6), { namespace: 'slw-6', hostVeth: 'slw-6h' });
  const biggest = namesForSlot('abcde', 2 ** 24 - 2);
  assert.ok(biggest.hostVeth.length <= IFNAME_MAX, biggest.hostVeth);
});

test('prefixes and bridge names are checked before any use', () => {
  for (const bad of ['', 'SLW', 'toolong', 'a-b', '1ab', 'a b', 'x;y'])
    assert.throws(() => validatePrefix(bad), /Invalid namespace prefix/);
  for (const bad of ['', 'a'.repeat(16), 'br 0', 'br/0', '-br', 'br;0'])
    assert.throws(() => validateBridgeName(bad), /Invalid bridge name/);
  assert.equal(validateBridgeName('slipway0'), 'slipway0');
});

test('stale objects are recognised only for the exact prefix', () => {
  assert.equal(slotOfNamespace('slw', 'slw-12'), 12);
  assert.equal(slotOfNamespace('slw', 'slwt-12'), undefined);
  assert.equal(slotOfNamespace('slw', 'slw-12x'), undefined);
  assert.equal(slotOfNamespace('slw', 'other'), undefined);
  assert.equal(slotOfHostVeth('slw', 'slw-12h'), 12);
  assert.equal(slotOfHostVeth('slw', 'slw-12'), undefined);
  assert.equal(slotOfHostVeth('slwt', 'slw-12h'), undefined);
});
