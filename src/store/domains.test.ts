import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from './store.js';
import { ConflictError, NotFoundError } from '../core/errors.js';

function fixture() {
  const store = Store.open(join(mkdtempSync(join(tmpdir(), 'slipway-domains-')), 'slipway.db'));
  const acme = store.orgs.create('acme');
  const other = store.orgs.create('other');
  const a = store.apps.create({ orgId: acme.id, name: 'a', type: 'node', region: 'par' });
  const b = store.apps.create({ orgId: other.id, name: 'b', type: 'node', region: 'par' });
  return { store, a, b };
}

test('a domain belongs to one application platform-wide; the refusal names no other application', () => {
  const { store, a, b } = fixture();
  let changes = 0;
  store.domains.onChange(() => changes++);
  store.domains.add(a.id, 'shop.example.com');
  assert.throws(
    () => store.domains.add(a.id, 'shop.example.com'),
    (e: Error) => e instanceof ConflictError && /already a domain of this application/.test(e.message),
  );
  assert.throws(
    () => store.domains.add(b.id, 'shop.example.com'),
    (e: ConflictError) =>
      /already in use on this platform/.test(e.message) &&
      !`${e.message} ${e.hint}`.includes(a.id) &&
      !`${e.message} ${e.hint}`.includes('acme'),
  );
  assert.throws(() => store.domains.remove(b.id, 'shop.example.com'), NotFoundError, 'another app cannot remove it');
  assert.equal(changes, 1);
  store.domains.add(b.id, '*.example.com');
  assert.deepEqual(
    store.domains.all().map((d) => [d.fqdn, d.app_id]),
    [
      ['*.example.com', b.id],
      ['shop.example.com', a.id],
    ],
  );
  store.close();
});

test('one favourite per application; removing a domain removes its certificates; deleting the app frees its domains', () => {
  const { store, a, b } = fixture();
  store.domains.add(a.id, 'one.example.com');
  store.domains.add(a.id, 'two.example.com');
  assert.equal(store.domains.favourite(a.id), undefined);
  store.domains.setFavourite(a.id, 'one.example.com');
  store.domains.setFavourite(a.id, 'two.example.com');
  assert.equal(store.domains.favourite(a.id), 'two.example.com');
  assert.throws(() => store.domains.setFavourite(b.id, 'one.example.com'), NotFoundError);
  store.domains.clearFavourite(a.id);
  assert.equal(store.domains.favourite(a.id), undefined);

  store.certificates.put({
    fqdn: 'one.example.com',
    source: 'uploaded',
    certificate_pem: 'c',
    private_key_pem: 'k',
    not_before: 'x',
    not_after: 'y',
  });
  store.acme.saveOrder('one.example.com', 'pending', null, null);
  store.acme.saveOrder('gone.example.com', 'pending', null, null);
  assert.equal(store.acme.order('gone.example.com'), undefined, 'no order is recorded for a domain that does not exist');
  store.domains.remove(a.id, 'one.example.com');
  assert.deepEqual(store.certificates.all(), []);
  assert.equal(store.acme.order('one.example.com'), undefined);

  store.db.prepare('DELETE FROM apps WHERE id = ?').run(a.id);
  store.domains.add(b.id, 'two.example.com');
  store.close();
});

test('a domain waiting for its proof holds nothing against another claim; the proof is checked against the claim of the moment', () => {
  const store = Store.open(':memory:');
  const org = store.orgs.create('acme');
  const squatter = store.apps.create({ orgId: org.id, name: 'squatter', type: 'node', region: 'par' });
  const owner = store.apps.create({ orgId: org.id, name: 'owner', type: 'node', region: 'par' });
  const claimed = store.domains.add(squatter.id, 'shop.example.com', { pendingVerification: true });
  assert.equal(claimed.verified_at, null);
  const again = store.domains.add(owner.id, 'shop.example.com', { pendingVerification: true });
  assert.equal(store.domains.byName('shop.example.com')?.app_id, owner.id, 'the waiting claim is replaced');
  assert.notEqual(again.verification_token, claimed.verification_token, 'each app has a token of its own');
  assert.equal(store.domains.markVerified('shop.example.com', claimed.verification_token!), false, "the old claim's token proves nothing");
  assert.equal(store.domains.markVerified('shop.example.com', again.verification_token!), true);
  assert.throws(() => store.domains.add(squatter.id, 'shop.example.com', { pendingVerification: true }), /already in use/);
  store.domains.remove(owner.id, 'shop.example.com');
  assert.equal(
    store.domains.add(owner.id, 'shop.example.com', { pendingVerification: true }).verification_token,
    again.verification_token,
    'a re-added name keeps its token: a record already published still proves it',
  );
  store.close();
});
