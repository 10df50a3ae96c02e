import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../store/store.js';
import { AddonManager } from '../addons/addon-manager.js';
import { makeAddonProviders } from '../addons/registry.js';
import { appEnvForDisplay, appEnvironment } from './app-environment.js';

// Real store and real providers; env() is pure, so no server has to run for these.
function fixture() {
  const dataDir = mkdtempSync(join(tmpdir(), 'slipway-appenv-'));
  const store = Store.open(join(dataDir, 'slipway.db'));
  const addons = new AddonManager({ store, providers: makeAddonProviders({ dataDir, gatewayAddress: '10.77.0.1' }), log: () => undefined });
  const org = store.orgs.create('acme');
  const app = store.apps.create({ orgId: org.id, name: 'web', type: 'node', region: 'par' });
  const api = store.apps.create({ orgId: org.id, name: 'api', type: 'node', region: 'par' });
  const cache = store.addons.create({ orgId: org.id, provider: 'redis', name: 'cache' });
  store.addons.setConfig(cache.id, { port: '6401', password: 'secret-pw' });
  return { store, addons, app, api, cache };
}

test("an app's environment: linked app < add-on < own, and env sections strongest first", () => {
  const { store, addons, app, api, cache } = fixture();
  store.links.linkAddon(app.id, cache.id);
  store.links.linkApp(app.id, api.id);
  store.publishedConfig.set(api.id, 'API_BASE', 'http://api');
  store.publishedConfig.set(api.id, 'REDIS_HOST', 'from-api');
  store.env.set(app.id, 'REDIS_PORT', '7000');

  const env = appEnvironment(store, addons, app.id);
  assert.deepEqual(env, {
    API_BASE: 'http://api',
    REDIS_HOST: '10.77.0.1',
    REDIS_PORT: '7000',
    REDIS_PASSWORD: 'secret-pw',
    REDIS_URL: 'redis://:secret-pw@10.77.0.1:6401',
  });
  assert.deepEqual(
    appEnvForDisplay(store, addons, app.id).map((s) => [s.source, s.env.map((v) => v.name)]),
    [
      ['application', ['REDIS_PORT']],
      ['add-on cache (redis)', ['REDIS_HOST', 'REDIS_PORT', 'REDIS_PASSWORD', 'REDIS_URL']],
      ['linked app api', ['API_BASE', 'REDIS_HOST']],
    ],
  );
  store.close();
});

test('an app with no links gets its own variables only; an add-on still being provisioned adds nothing', () => {
  const { store, addons, app } = fixture();
  store.env.set(app.id, 'A', '1');
  const pending = store.addons.create({ orgId: app.org_id, provider: 'postgresql', name: 'db' });
  store.links.linkAddon(app.id, pending.id);
  assert.deepEqual(appEnvironment(store, addons, app.id), { A: '1' });
  store.close();
});
