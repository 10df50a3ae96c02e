import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from './store.js';
import { ConflictError } from '../core/errors.js';

function fixture() {
  const store = Store.open(join(mkdtempSync(join(tmpdir(), 'slipway-links-')), 'slipway.db'));
  const acme = store.orgs.create('acme');
  const other = store.orgs.create('other');
  const a = store.apps.create({ orgId: acme.id, name: 'a', type: 'node', region: 'par' });
  const b = store.apps.create({ orgId: acme.id, name: 'b', type: 'node', region: 'par' });
  return { store, acme, other, a, b };
}

test('add-on names are unique per organisation, and the config is kept as given', () => {
  const { store, acme, other } = fixture();
  const db = store.addons.create({ orgId: acme.id, provider: 'postgresql', name: 'db' });
  assert.match(db.id, /^addon_[0-9a-f-]{36}$/);
  assert.throws(() => store.addons.create({ orgId: acme.id, provider: 'redis', name: 'db' }), ConflictError);
  store.addons.create({ orgId: other.id, provider: 'redis', name: 'db' });
  store.addons.setConfig(db.id, { password: 'p', port: '5433' });
  assert.deepEqual(store.addons.config(store.addons.byId(db.id)!), { password: 'p', port: '5433' });
  assert.deepEqual(store.addons.providersInUse(), ['postgresql', 'redis']);
  store.close();
});

test('links come back in link order, both ways, and go with the app or add-on they name', () => {
  const { store, acme, a, b } = fixture();
  const db = store.addons.create({ orgId: acme.id, provider: 'postgresql', name: 'db' });
  const cache = store.addons.create({ orgId: acme.id, provider: 'redis', name: 'cache' });
  // Linked in the same millisecond and against alphabetical order: the link order still shows.
  assert.equal(store.links.linkAddon(a.id, db.id), true);
  assert.equal(store.links.linkAddon(a.id, cache.id), true);
  assert.equal(store.links.linkAddon(a.id, db.id), false, 'linking twice is a no-op');
  assert.deepEqual(
    store.links.addonsOf(a.id).map((x) => x.name),
    ['db', 'cache'],
  );
  assert.deepEqual(store.links.appsOfAddon(db.id), [a.id]);

  assert.equal(store.links.linkApp(a.id, b.id), true);
  assert.deepEqual(
    store.links.targetsOf(a.id).map((x) => x.name),
    ['b'],
  );
  assert.deepEqual(
    store.links.consumersOf(b.id).map((x) => x.name),
    ['a'],
  );
  assert.throws(() => store.links.linkApp(a.id, a.id), /CHECK constraint/);

  store.addons.remove(db.id);
  assert.deepEqual(
    store.links.addonsOf(a.id).map((x) => x.name),
    ['cache'],
  );
  store.apps.remove(b.id);
  assert.deepEqual(store.links.targetsOf(a.id), []);
  assert.equal(store.links.unlinkAddon(a.id, cache.id), true);
  assert.equal(store.links.unlinkAddon(a.id, cache.id), false);
  store.close();
});

test('exposed configuration reports whether a set changed anything', () => {
  const { store, a } = fixture();
  assert.equal(store.publishedConfig.set(a.id, 'API_BASE', 'http://a'), true);
  assert.equal(store.publishedConfig.set(a.id, 'API_BASE', 'http://a'), false);
  assert.equal(store.publishedConfig.set(a.id, 'API_BASE', 'http://a2'), true);
  assert.deepEqual(store.publishedConfig.list(a.id), [{ name: 'API_BASE', value: 'http://a2' }]);
  assert.equal(store.publishedConfig.remove(a.id, 'API_BASE'), true);
  assert.equal(store.publishedConfig.remove(a.id, 'API_BASE'), false);
  store.close();
});
