import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Store } from './store.js';
import { openStoreSecrets, rotateStoreSecrets, secretsKeyPath, SecretsKeyError } from './secrets-key-file.js';
import { SecretUnreadable } from './secret-box.js';

/** A store as an older slipway left it (secrets in clear), its key file path beside its folder. */
function oldStore(): { path: string; keyFile: string; appId: string; otherAppId: string } {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'slipway-secrets-')), 'data');
  const path = `${dataDir}-slipway.db`;
  const store = Store.open(path);
  const org = store.orgs.create('acme');
  const app = store.apps.create({ orgId: org.id, name: 'web', type: 'node', region: 'par' });
  const other = store.apps.create({ orgId: org.id, name: 'api', type: 'node', region: 'par' });
  store.env.set(app.id, 'DATABASE_URL', 'postgres://u:hunter2@db/x');
  store.env.set(other.id, 'TOKEN', 'other-app-token');
  store.publishedConfig.set(app.id, 'PUBLIC_KEY', 'published-secret');
  store.webhooks.add({ appId: app.id, name: 'ci', url: 'https://hooks.example.org/T0/abc', format: 'raw', events: [], secret: 'whsec' });
  store.drains.add({
    app_id: app.id,
    type: 'HTTP',
    url: 'https://logs.example.org/?token=draintoken',
    username: 'drainuser',
    password: 'drainpass',
    with_access_logs: 0,
  });
  const addon = store.addons.create({ orgId: org.id, provider: 'redis', name: 'cache' });
  store.addons.setConfig(addon.id, { password: 'redispass' });
  store.close();
  return { path, keyFile: secretsKeyPath(dataDir), appId: app.id, otherAppId: other.id };
}

const SECRETS = ['hunter2', 'other-app-token', 'published-secret', 'T0/abc', 'whsec', 'draintoken', 'drainuser', 'drainpass', 'redispass'];

function rawDump(path: string): string {
  const db = new Database(path, { readonly: true });
  const parts = ['env_vars', 'published_config', 'notification_webhooks', 'drains', 'addons'].map((t) =>
    JSON.stringify(db.prepare(`SELECT * FROM ${t}`).all()),
  );
  db.close();
  return parts.join('\n');
}

test('the key file sits beside the data folder, named after it', () => {
  assert.equal(secretsKeyPath('/var/lib/slipway'), '/var/lib/slipway.secrets-key');
  assert.equal(secretsKeyPath('/var/lib/slipway/'), '/var/lib/slipway.secrets-key');
});

test('the first start makes a 0600 key and seals what an older store kept in clear; a second start seals nothing more', () => {
  const { path, keyFile, appId } = oldStore();
  for (const secret of SECRETS) assert.ok(rawDump(path).includes(secret), `${secret} starts in clear`);
  const store = Store.open(path);
  const first = openStoreSecrets(store, keyFile);
  assert.equal(first.created, true);
  assert.equal(first.sealed, 9, 'each secret value and the add-on config');
  assert.equal(statSync(keyFile).mode & 0o777, 0o600);
  const dump = rawDump(path);
  for (const secret of SECRETS) assert.ok(!dump.includes(secret), `${secret} is no longer in clear`);
  assert.equal(store.env.asRecord(appId).DATABASE_URL, 'postgres://u:hunter2@db/x');
  assert.equal(store.webhooks.byName(appId, 'ci')?.secret, 'whsec');
  assert.equal(store.drains.ofApp(appId)[0]?.password, 'drainpass');
  store.close();
  const again = Store.open(path);
  const second = openStoreSecrets(again, keyFile);
  assert.deepEqual([second.created, second.sealed], [false, 0]);
  assert.equal(again.publishedConfig.list(appId)[0]?.value, 'published-secret');
  again.close();
});

test('a value copied into another app is refused, not served there', () => {
  const { path, keyFile, appId, otherAppId } = oldStore();
  const store = Store.open(path);
  openStoreSecrets(store, keyFile);
  const theirs = store.db.prepare('SELECT value FROM env_vars WHERE app_id = ?').get(appId) as { value: string };
  store.db.prepare('UPDATE env_vars SET value = ? WHERE app_id = ?').run(theirs.value, otherAppId);
  assert.throws(() => store.env.list(otherAppId), SecretUnreadable);
  store.close();
});

test('a store with sealed secrets is refused when its key file is missing or another key', () => {
  const { path, keyFile } = oldStore();
  const store = Store.open(path);
  openStoreSecrets(store, keyFile);
  store.close();
  const kept = readFileSync(keyFile);
  renameSync(keyFile, `${keyFile}.away`);
  const reopened = Store.open(path);
  assert.throws(
    () => openStoreSecrets(reopened, keyFile),
    (e: unknown) => e instanceof SecretsKeyError && /key file .* is missing/.test(e.message),
  );
  assert.equal(existsSync(keyFile), false, 'no new key is made over sealed secrets');
  writeFileSync(keyFile, `${'ab'.repeat(32)}\n`, { mode: 0o600 });
  assert.throws(
    () => openStoreSecrets(reopened, keyFile),
    (e: unknown) => e instanceof SecretsKeyError && /is not the one the store's secrets were sealed with/.test(e.message),
  );
  writeFileSync(keyFile, kept);
  chmodSync(keyFile, 0o644);
  assert.throws(
    () => openStoreSecrets(reopened, keyFile),
    (e: unknown) => e instanceof SecretsKeyError && /chmod 600/.test(e.hint ?? ''),
  );
  chmodSync(keyFile, 0o600);
  openStoreSecrets(reopened, keyFile);
  reopened.close();
});

test('a rotation re-seals every value under a new key file; the old key no longer reads the store', () => {
  const { path, keyFile, appId } = oldStore();
  const store = Store.open(path);
  openStoreSecrets(store, keyFile);
  const oldKey = readFileSync(keyFile);
  const result = rotateStoreSecrets(store, keyFile);
  assert.equal(result.resealed, 9);
  assert.notEqual(result.oldKeyId, result.newKeyId);
  assert.notDeepEqual(readFileSync(keyFile), oldKey);
  assert.equal(statSync(keyFile).mode & 0o777, 0o600);
  assert.equal(existsSync(`${keyFile}.new`), false);
  assert.equal(store.env.asRecord(appId).DATABASE_URL, 'postgres://u:hunter2@db/x', 'served with the new key at once');
  store.close();
  writeFileSync(`${keyFile}.old`, oldKey, { mode: 0o600 });
  const withOld = Store.open(path);
  assert.throws(() => openStoreSecrets(withOld, `${keyFile}.old`), SecretsKeyError);
  openStoreSecrets(withOld, keyFile);
  assert.equal(withOld.drains.ofApp(appId)[0]?.url, 'https://logs.example.org/?token=draintoken');
  withOld.close();
});

test('a rotation stopped after its commit is finished at the next start; one stopped before is forgotten', () => {
  const { path, keyFile, appId } = oldStore();
  const store = Store.open(path);
  openStoreSecrets(store, keyFile);
  const oldKey = readFileSync(keyFile);
  rotateStoreSecrets(store, keyFile);
  store.close();
  // As if the rename had not happened: the new key waits as .new, the old one is in place.
  renameSync(keyFile, `${keyFile}.new`);
  writeFileSync(keyFile, oldKey, { mode: 0o600 });
  const resumed = Store.open(path);
  openStoreSecrets(resumed, keyFile);
  assert.equal(existsSync(`${keyFile}.new`), false);
  assert.equal(resumed.env.asRecord(appId).DATABASE_URL, 'postgres://u:hunter2@db/x');
  resumed.close();
  // A .new the store never used (the transaction did not commit) is removed, the key kept.
  writeFileSync(`${keyFile}.new`, `${'cd'.repeat(32)}\n`, { mode: 0o600 });
  const kept = readFileSync(keyFile);
  const again = Store.open(path);
  openStoreSecrets(again, keyFile);
  assert.equal(existsSync(`${keyFile}.new`), false);
  assert.deepEqual(readFileSync(keyFile), kept);
  again.close();
});
