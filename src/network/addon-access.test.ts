import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addonEndpoints, addonPorts } from './addon-access.js';

test("an add-on's ports are read from its variables", () => {
  assert.deepEqual(addonPorts({ POSTGRESQL_ADDON_HOST: '10.77.0.1', POSTGRESQL_ADDON_PORT: '5433', POSTGRESQL_ADDON_PASSWORD: '123' }), [5433]);
  assert.deepEqual(addonPorts({ REDIS_PORT: '6401', REDIS_URL: 'redis://:x@10.77.0.1:6401' }), [6401]);
  assert.deepEqual(addonPorts({ SUPPORT_PORT: 'eighty' }), []);
});

test('each sandbox reaches the add-ons of its own app only', () => {
  const ports: Record<string, number[]> = { app_a: [5433, 6401], app_b: [6402] };
  const endpoints = addonEndpoints(
    [
      { appId: 'app_a', kind: 'instance', address: '10.77.0.2' },
      { appId: 'app_a', kind: 'build', address: '10.77.0.3' },
      { appId: 'app_b', kind: 'instance', address: '10.77.0.4' },
      { appId: 'app_c', kind: 'instance', address: '10.77.0.5' },
    ],
    (appId) => ports[appId] ?? [],
  );
  assert.deepEqual(endpoints, [
    { address: '10.77.0.2', port: 5433 },
    { address: '10.77.0.2', port: 6401 },
    { address: '10.77.0.3', port: 5433 },
    { address: '10.77.0.3', port: 6401 },
    { address: '10.77.0.4', port: 6402 },
  ]);
});
