import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addonProviderNames, isAddonProviderName, makeAddonProviders, unknownProviderMessage } from './registry.js';

describe('add-on provider registry', () => {
  test('names and the unknown-provider message', () => {
    assert.deepEqual([...addonProviderNames], ['postgresql', 'redis', 'fs-bucket']);
    assert.equal(isAddonProviderName('redis'), true);
    assert.equal(isAddonProviderName('mysql'), false);
    assert.match(unknownProviderMessage('mysql'), /Unknown add-on provider "mysql"\. Available providers: postgresql, redis, fs-bucket/);
    const providers = makeAddonProviders({ dataDir: '/nonexistent', gatewayAddress: '10.77.0.1' });
    assert.deepEqual([...providers.keys()], [...addonProviderNames]);
    for (const provider of providers.values()) assert.ok(provider.description.length > 10);
  });

  test('a bad gateway address or port range is refused at construction', () => {
    assert.throws(() => makeAddonProviders({ dataDir: '/x', gatewayAddress: 'bridge0' }), /not an IPv4 address/);
    assert.throws(() => makeAddonProviders({ dataDir: '/x', gatewayAddress: '10.77.0.1', redisPortRange: [7000, 6000] }), /invalid/);
  });

  test('start refuses a gateway address no interface holds', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'slipway-addons-nogw-'));
    try {
      const redis = makeAddonProviders({ dataDir, gatewayAddress: '10.79.255.1' }).get('redis')!;
      await assert.rejects(redis.start(), /not assigned to any interface/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
