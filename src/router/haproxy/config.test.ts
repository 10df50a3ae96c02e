import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderHaproxyConfig, routerThreads } from './config.js';

test('the router takes half the cores, at least one thread', () => {
  assert.deepEqual([1, 2, 3, 4, 16].map(routerThreads), [1, 1, 1, 2, 8]);
  const config = renderHaproxyConfig({
    workDir: '/var/lib/slipway/router',
    listenHost: '127.0.0.1',
    port: 8080,
    httpsPort: 0,
    trustedProxies: [],
    slots: 1,
    servers: new Map(),
    drainTimeoutSeconds: 5,
    threads: 3,
  });
  assert.match(config, /^ {2}nbthread 3$/m);
});
