import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setupInstanceNetworkArgvs, teardownInstanceNetworkArgvs, bridgeAddressArgv } from './netns-commands.js';

const tools = { ip: '/usr/sbin/ip', setpriv: '/usr/bin/setpriv' };
const net = { namespace: 'slw-6', hostVeth: 'slw-6h', address: '10.77.0.6', prefixLength: 16, gateway: '10.77.0.1', bridge: 'slipway0' };

test('instance network setup, in order', () => {
  assert.deepEqual(setupInstanceNetworkArgvs(tools, net), [
    ['/usr/sbin/ip', 'netns', 'add', 'slw-6'],
    ['/usr/sbin/ip', 'link', 'add', 'name', 'slw-6h', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', 'slw-6'],
    ['/usr/sbin/ip', 'link', 'set', 'dev', 'slw-6h', 'master', 'slipway0'],
    ['/usr/sbin/ip', 'link', 'set', 'dev', 'slw-6h', 'type', 'bridge_slave', 'isolated', 'on'],
    ['/usr/sbin/ip', 'link', 'set', 'dev', 'slw-6h', 'up'],
    ['/usr/sbin/ip', '-n', 'slw-6', 'link', 'set', 'dev', 'lo', 'up'],
    ['/usr/sbin/ip', '-n', 'slw-6', 'address', 'add', '10.77.0.6/16', 'dev', 'eth0'],
    ['/usr/sbin/ip', '-n', 'slw-6', 'link', 'set', 'dev', 'eth0', 'up'],
    ['/usr/sbin/ip', '-n', 'slw-6', 'route', 'add', 'default', 'via', '10.77.0.1', 'dev', 'eth0'],
  ]);
  assert.deepEqual(teardownInstanceNetworkArgvs(tools, net), [
    ['/usr/sbin/ip', 'link', 'delete', 'dev', 'slw-6h'],
    ['/usr/sbin/ip', 'netns', 'delete', 'slw-6'],
  ]);
  assert.deepEqual(bridgeAddressArgv(tools, 'slipway0', '10.77.0.1', 16), [
    '/usr/sbin/ip',
    'address',
    'replace',
    '10.77.0.1/16',
    'dev',
    'slipway0',
  ]);
});
