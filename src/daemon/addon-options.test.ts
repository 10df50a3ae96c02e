import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addonProviderOptions } from './addon-options.js';

test('add-on server ports come from the environment, defaults otherwise', () => {
  assert.deepEqual(addonProviderOptions('/d', '10.77.0.1', {}), { dataDir: '/d', gatewayAddress: '10.77.0.1' });
  assert.deepEqual(addonProviderOptions('/d', '10.77.0.1', { SLIPWAY_POSTGRES_PORT: '15433', SLIPWAY_REDIS_PORTS: '16400-16410' }), {
    dataDir: '/d',
    gatewayAddress: '10.77.0.1',
    postgresPort: 15433,
    redisPortRange: [16400, 16410],
  });
});

test('bad values are refused with what was expected', () => {
  assert.throws(
    () => addonProviderOptions('/d', '10.77.0.1', { SLIPWAY_POSTGRES_PORT: 'x' }),
    /SLIPWAY_POSTGRES_PORT must be a port number.*"x"/,
  );
  assert.throws(
    () => addonProviderOptions('/d', '10.77.0.1', { SLIPWAY_REDIS_PORTS: '6400' }),
    /SLIPWAY_REDIS_PORTS must be a range "first-last"/,
  );
});
