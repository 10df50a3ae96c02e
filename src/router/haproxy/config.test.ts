import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HOLD_MAX_SECONDS, holdScript, renderHaproxyConfig, routerThreads } from './config.js';

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

test("a held app's requests meet the hold action, which looks at the hold map until its entry goes", () => {
  const config = renderHaproxyConfig({
    workDir: '/var/lib/slipway/router',
    listenHost: '127.0.0.1',
    port: 8080,
    httpsPort: 8443,
    trustedProxies: [],
    slots: 1,
    servers: new Map(),
    drainTimeoutSeconds: 5,
    threads: 1,
  });
  assert.match(config, /^ {2}lua-load \/var\/lib\/slipway\/router\/hold\.lua$/m);
  const rules = config.match(
    /^ {2}http-request lua\.slipway_hold if \{ var\(txn\.backend\),map_str\(\/var\/lib\/slipway\/router\/hold\.map\) -m found \}$/gm,
  );
  assert.equal(rules?.length, 2, 'on the HTTP and the HTTPS listener');
  // Held after the backend is known, before anything is sent on.
  assert.ok(config.indexOf('lua.slipway_hold') > config.indexOf('map_end(/var/lib/slipway/router/wildcards.map)'));
  const script = holdScript('/var/lib/slipway/router/hold.map');
  assert.match(script, /Map\.new\("\/var\/lib\/slipway\/router\/hold\.map", Map\._str\)/);
  assert.match(script, new RegExp(`core\\.now\\(\\)\\.sec \\+ ${HOLD_MAX_SECONDS}`));
  assert.match(script, /core\.msleep\(25\)/);
});
