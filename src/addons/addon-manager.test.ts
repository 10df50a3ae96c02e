import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../store/store.js';
import { AddonManager, AddonUnavailableError } from './addon-manager.js';
import { makeAddonProviders } from './registry.js';
import { ValidationError } from '../core/errors.js';

function fixture(gatewayAddress: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'slipway-manager-'));
  const store = Store.open(join(dataDir, 'slipway.db'));
  const lines: string[] = [];
  const manager = new AddonManager({ store, providers: makeAddonProviders({ dataDir, gatewayAddress }), log: (l) => lines.push(l) });
  const org = store.orgs.create('acme');
  return { store, manager, org, lines };
}

test('providers are listed in order; an unknown one is refused with the list', () => {
  const { store, manager } = fixture('10.77.0.1');
  assert.deepEqual(
    manager.providerList().map((p) => p.name),
    ['postgresql', 'redis', 'fs-bucket'],
  );
  assert.throws(
    () => manager.provider('mysql'),
    (e: unknown) => e instanceof ValidationError && /Available providers: postgresql, redis, fs-bucket/.test(e.message),
  );
  store.close();
});

test('a provider that cannot start fails the create with the reason and keeps no record', async () => {
  // No interface holds this address, so the Redis provider refuses to start (a real check, no server needed).
  const { store, manager, org } = fixture('10.79.254.1');
  await assert.rejects(
    manager.create({ orgId: org.id, provider: 'redis', name: 'cache' }),
    (e: unknown) =>
      e instanceof AddonUnavailableError &&
      e.status === 503 &&
      /redis add-on servers could not start: .*not assigned to any interface/.test(e.message),
  );
  assert.deepEqual(store.addons.all(), []);
  store.close();
});

test('resumeAll with no add-ons starts nothing; a record left half-created is dropped', async () => {
  const { store, manager, org, lines } = fixture('10.79.254.1');
  await manager.resumeAll();
  assert.deepEqual(lines, []);
  store.addons.create({ orgId: org.id, provider: 'postgresql', name: 'db' }); // config never set
  await manager.resumeAll();
  assert.deepEqual(store.addons.all(), []);
  assert.match(lines.join('\n'), /was never fully created; removing its record/);
  store.close();
});
