import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Store } from './store.js';
import { migrations } from './migrations/index.js';
import { tokenState } from './api-tokens.js';
import { hashSecret } from '../core/ids.js';

function freshStore(): Store {
  return Store.open(join(mkdtempSync(join(tmpdir(), 'slipway-tokens-')), 'slipway.db'));
}

test('an expired token and a revoked token are refused, each saying when it ended', () => {
  const store = freshStore();
  const user = store.users.create('alice');
  const now = new Date('2030-01-01T00:00:00.000Z');
  const short = store.tokens.issue(user.id, 'short', '2030-01-01T01:00:00.000Z');
  assert.equal(store.tokens.check(short.secret, now).ok, true);
  assert.deepEqual(store.tokens.check(short.secret, new Date('2030-01-01T01:00:00.000Z')), {
    ok: false,
    reason: 'expired',
    at: '2030-01-01T01:00:00.000Z',
  });

  const revoked = store.tokens.issue(user.id, 'revoked');
  assert.equal(store.tokens.revoke(revoked.token.id, now), true);
  assert.equal(store.tokens.revoke(revoked.token.id, now), false, 'revoking twice changes nothing');
  assert.deepEqual(store.tokens.check(revoked.secret), { ok: false, reason: 'revoked', at: now.toISOString() });
  assert.equal(store.users.byToken(revoked.secret), undefined);
  assert.deepEqual(store.tokens.check('slw_unknown'), { ok: false, reason: 'unknown' });
  assert.equal(tokenState(store.tokens.byId(revoked.token.id)!), 'revoked');
  store.close();
});

test('a use is noted at most once a minute', () => {
  const store = freshStore();
  const user = store.users.create('bob');
  const { secret, token } = store.tokens.issue(user.id, 'ci');
  store.tokens.check(secret, new Date('2030-01-01T00:00:00.000Z'));
  store.tokens.check(secret, new Date('2030-01-01T00:00:30.000Z'));
  assert.equal(store.tokens.byId(token.id)!.last_used_at, '2030-01-01T00:00:00.000Z');
  store.tokens.check(secret, new Date('2030-01-01T00:02:00.000Z'));
  assert.equal(store.tokens.byId(token.id)!.last_used_at, '2030-01-01T00:02:00.000Z');
  store.close();
});

test('working administrator tokens are counted, leaving out one', () => {
  const store = freshStore();
  const admin = store.users.create('root', true);
  const user = store.users.create('carol');
  const first = store.tokens.issue(admin.id, 'admin token');
  store.tokens.issue(user.id, 'not an admin');
  assert.equal(store.tokens.validAdminTokenCount(), 1);
  assert.equal(store.tokens.validAdminTokenCount(first.token.id), 0);
  const second = store.tokens.issue(admin.id, 'second', '2000-01-01T00:00:00.000Z');
  assert.equal(store.tokens.validAdminTokenCount(first.token.id), 0, 'an expired token does not count');
  store.tokens.issue(admin.id, 'third');
  assert.equal(store.tokens.validAdminTokenCount(first.token.id), 1);
  assert.ok(second);
  store.close();
});

test('tokens from before expiry existed keep working after the migration', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'slipway-tokens-')), 'slipway.db');
  const db = new Database(path);
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  for (const m of migrations.filter((m) => m.version < 6)) {
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
  }
  // A token as the daemon wrote it before the migration: no expiry, revocation or last use.
  db.prepare("INSERT INTO users (id, name, is_admin, created_at) VALUES ('user_1', 'old', 1, '2024-01-01T00:00:00Z')").run();
  db.prepare(
    "INSERT INTO api_tokens (id, user_id, token_hash, label, created_at) VALUES ('token_1', 'user_1', ?, 'admin token', '2024-01-01T00:00:00Z')",
  ).run(hashSecret('slw_old'));
  db.close();
  const store = Store.open(path);
  assert.equal(store.users.byToken('slw_old')?.name, 'old');
  assert.equal(tokenState(store.tokens.byId('token_1')!), 'valid');
  store.close();
});

test('a valid token is accepted even when noting its use cannot be written (a full disk)', () => {
  const store = freshStore();
  const user = store.users.create('carol');
  const { secret } = store.tokens.issue(user.id, 'cli');
  // The store refuses the bookkeeping write the way a full disk would make it fail.
  store.db.exec("CREATE TRIGGER no_room BEFORE UPDATE ON api_tokens BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END");
  const check = store.tokens.check(secret);
  assert.equal(check.ok, true);
  assert.equal(store.tokens.byId(check.ok ? check.token.id : '')!.last_used_at, null);
  store.close();
});
