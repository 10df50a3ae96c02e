import { test } from 'node:test';
import assert from 'node:assert/strict';
import { carriedIpv4, parseCidr, refusedRangeOf } from './egress-ranges.js';

test('every range the daemon refuses is named by its kind; public and documentation addresses pass', () => {
  const cases: Array<[string, string | undefined]> = [
    ['0.0.0.0', 'reserved'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.233.7', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['127.0.0.1', 'loopback'],
    ['127.9.9.9', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['169.254.77.77', 'link-local'],
    ['192.0.0.8', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['224.0.0.251', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'reserved'],
    ['fe80::1', 'link-local'],
    ['FEBF::1', 'link-local'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['ff02::1', 'multicast'],
    ['100::1', 'reserved'],
    // An IPv4 address carried in IPv6 is judged as itself.
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['64:ff9b::c0a8:e907', 'private'],
    ['2002:c0a8:e907::1', 'private'],
    ['::192.168.1.1', 'private'],
    ['fe80::1%eth0', 'link-local'],
    // Public, and the documentation ranges (no host behind them on the internet).
    ['8.8.8.8', undefined],
    ['100.63.255.255', undefined],
    ['100.128.0.0', undefined],
    ['172.15.255.255', undefined],
    ['172.32.0.0', undefined],
    ['169.253.255.255', undefined],
    ['203.0.113.7', undefined],
    ['198.51.100.1', undefined],
    ['192.0.2.1', undefined],
    ['2001:db8::1', undefined],
    ['::ffff:8.8.8.8', undefined],
    ['2606:4700::1111', undefined],
    ['64:ff9b::808:808', undefined],
  ];
  for (const [address, kind] of cases) assert.equal(refusedRangeOf(address)?.kind, kind, address);
});

test('what is not an address is refused as reserved', () => {
  assert.equal(refusedRangeOf('example.com')?.kind, 'reserved');
});

test('carried IPv4 addresses are found in mapped, NAT64, 6to4 and compatible forms only', () => {
  assert.equal(carriedIpv4('::ffff:192.168.1.2'), '192.168.1.2');
  assert.equal(carriedIpv4('::ffff:c0a8:102'), '192.168.1.2');
  assert.equal(carriedIpv4('64:ff9b::a9fe:a9fe'), '169.254.169.254');
  assert.equal(carriedIpv4('2002:a9fe:a9fe::'), '169.254.169.254');
  assert.equal(carriedIpv4('::1'), undefined);
  assert.equal(carriedIpv4('2606:4700::1111'), undefined);
  assert.equal(carriedIpv4('10.0.0.1'), undefined);
});

test('ranges are read in both families and must start their network', () => {
  assert.equal(parseCidr('192.168.233.0/24').bits, 24);
  assert.equal(parseCidr('fd00:1::/64').family, 6);
  assert.throws(() => parseCidr('192.168.233.7/24'), /use 192\.168\.233\.0\/24/);
  assert.throws(() => parseCidr('fd00::1/64'), /use fd00::\/64/);
  assert.throws(() => parseCidr('192.168.233.0/33'), /Not an address range/);
  assert.throws(() => parseCidr('example.com/8'), /Not an address range/);
  assert.throws(() => parseCidr('10.0.0.0'), /Not an address range/);
});
