import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Store } from './store.js';
import { schemaVersion } from './database.js';
import { migrations } from './migrations/index.js';
import { ConflictError } from '../core/errors.js';

function freshStore(): { store: Store; path: string } {
  const path = join(mkdtempSync(join(tmpdir(), 'slipway-store-')), 'slipway.db');
  return { store: Store.open(path), path };
}

test('the store opens in WAL mode with every migration applied, and re-opening applies none twice', () => {
  const { store, path } = freshStore();
  assert.equal(store.db.pragma('journal_mode', { simple: true }), 'wal');
  assert.equal(schemaVersion(store.db), migrations.at(-1)!.version);
  store.close();
  const again = Store.open(path);
  const rows = again.db.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get() as { n: number };
  assert.equal(rows.n, migrations.length);
  again.close();
});

test('tokens are stored hashed and resolve to their user', () => {
  const { store, path } = freshStore();
  const user = store.users.create('alice');
  const token = store.users.issueToken(user.id, 'test');
  assert.equal(store.users.byToken(token)?.id, user.id);
  assert.equal(store.users.byToken(token + 'x'), undefined);
  const raw = new Database(path, { readonly: true });
  const stored = raw.prepare('SELECT token_hash FROM api_tokens').all() as Array<{ token_hash: string }>;
  assert.ok(stored.every((r) => r.token_hash !== token && /^[0-9a-f]{64}$/.test(r.token_hash)));
  raw.close();
  store.close();
});

test('apps are unique per organisation and listed only for members', () => {
  const { store } = freshStore();
  const alice = store.users.create('alice');
  const bob = store.users.create('bob');
  const acme = store.orgs.create('acme');
  store.orgs.addMember(acme.id, alice.id, 'owner');
  const app = store.apps.create({ orgId: acme.id, name: 'shop', type: 'node', region: 'par' });
  assert.match(app.id, /^app_[0-9a-f-]{36}$/);
  assert.throws(() => store.apps.create({ orgId: acme.id, name: 'shop', type: 'node', region: 'par' }), ConflictError);
  assert.deepEqual(
    store.apps.listForUser(alice.id).map((a) => a.id),
    [app.id],
  );
  assert.deepEqual(store.apps.listForUser(bob.id), []);
  store.close();
});

test('env vars: set overwrites, replaceAll is all-or-nothing, deleting the app removes them', () => {
  const { store } = freshStore();
  const org = store.orgs.create('o');
  const app = store.apps.create({ orgId: org.id, name: 'a', type: 'node', region: 'par' });
  store.env.set(app.id, 'A', '1');
  store.env.set(app.id, 'A', '2');
  assert.deepEqual(store.env.asRecord(app.id), { A: '2' });
  store.env.replaceAll(app.id, [{ name: 'B', value: 'x\ny' }]);
  assert.deepEqual(store.env.list(app.id), [{ name: 'B', value: 'x\ny' }]);
  assert.throws(() =>
    store.env.replaceAll(app.id, [
      { name: 'C', value: '1' },
      { name: 'C', value: '2' },
    ]),
  );
  assert.deepEqual(store.env.list(app.id), [{ name: 'B', value: 'x\ny' }], 'a failed replace leaves the old set');
  store.apps.remove(app.id);
  assert.deepEqual(store.env.list(app.id), []);
  store.close();
});

test('deployments left WIP by a stopped daemon are cancelled on the next start', () => {
  const { store } = freshStore();
  const org = store.orgs.create('o');
  const app = store.apps.create({ orgId: org.id, name: 'a', type: 'node', region: 'par' });
  const d = store.deployments.create({ appId: app.id, commit: 'abc', cause: 'git push', userId: null });
  assert.equal(store.deployments.cancelUnfinished('daemon restarted'), 1);
  assert.equal(store.deployments.byId(d.id)?.state, 'CANCELLED');
  store.close();
});
