import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AddressPool, addressAt, contains, gatewayOf, parseSubnet, subnetToString } from './subnet.js';

test('parses a CIDR network and derives gateway and addresses', () => {
  const s = parseSubnet('10.77.0.0/16');
  assert.equal(subnetToString(s), '10.77.0.0/16');
  assert.equal(s.size, 65536);
  assert.equal(gatewayOf(s), '10.77.0.1');
  assert.equal(addressAt(s, 258), '10.77.1.2');
  assert.ok(contains(s, '10.77.255.254'));
  assert.ok(!contains(s, '10.78.0.1'));
  assert.ok(!contains(s, 'not an address'));
});

test('refuses malformed subnets and ones with host bits set', () => {
  for (const bad of ['10.77.0.0', '10.77.0.0/33', '10.77.0.0/30', '10.77.0.0/4', '300.1.1.0/24', '10.77.0.0/16; rm', ' 10.77.0.0/16', '']) {
    assert.throws(() => parseSubnet(bad), /Invalid instance subnet/, bad);
  }
  assert.throws(() => parseSubnet('10.77.0.5/16'), /did you mean 10\.77\.0\.0\/16/);
});

test('works for networks above 128.0.0.0 (unsigned arithmetic)', () => {
  const s = parseSubnet('192.168.50.0/24');
  assert.equal(gatewayOf(s), '192.168.50.1');
  assert.equal(addressAt(s, 254), '192.168.50.254');
});

test('the pool skips network, gateway and broadcast, and reuses addresses round-robin', () => {
  const s = parseSubnet('10.9.9.0/29'); // 8 addresses: .2 to .6 for instances
  const pool = new AddressPool(s);
  assert.equal(pool.capacity, 5);
  const got = [pool.allocate(), pool.allocate(), pool.allocate()];
  assert.deepEqual(got, [2, 3, 4]);
  pool.release(2);
  assert.equal(pool.allocate(), 5, 'a just-released address is not handed out first');
  assert.equal(pool.allocate(), 6);
  assert.equal(pool.allocate(), 2, 'wraps around to free slots');
  assert.throws(() => pool.allocate(), /No free address left in 10\.9\.9\.0\/29/);
  assert.equal(pool.inUse(), 5);
});
