import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isSealed, SecretBox, SecretUnreadable } from './secret-box.js';

const place = { table: 'env_vars', column: 'value', owner: ['app_1', 'DATABASE_URL'] };

test('a sealed value opens in its own place only, and never holds the clear text', () => {
  const { box } = SecretBox.generate('test key');
  const sealed = box.seal('postgres://u:hunter2@db/x', place);
  assert.ok(isSealed(sealed));
  assert.ok(!sealed.includes('hunter2'));
  assert.equal(box.open(sealed, place), 'postgres://u:hunter2@db/x');
  // A random nonce per value: the same value sealed twice gives two texts.
  assert.notEqual(box.seal('same', place), box.seal('same', place));
});

test('a value moved to another row, column or app is refused', () => {
  const { box } = SecretBox.generate('test key');
  const sealed = box.seal('s3cret', place);
  for (const other of [
    { ...place, owner: ['app_2', 'DATABASE_URL'] },
    { ...place, owner: ['app_1', 'OTHER'] },
    { ...place, column: 'name' },
    { ...place, table: 'published_config' },
    // Length-prefixed parts: moving a character from one part to the next is another place.
    { ...place, owner: ['app_1D', 'ATABASE_URL'] },
  ]) {
    assert.throws(
      () => box.open(sealed, other),
      (e: unknown) => e instanceof SecretUnreadable && /moved from another row/.test(e.message),
    );
  }
});

test('an altered value is refused', () => {
  const { box } = SecretBox.generate('test key');
  const sealed = box.seal('s3cret', place);
  const [head, body] = [sealed.slice(0, sealed.lastIndexOf(':') + 1), sealed.slice(sealed.lastIndexOf(':') + 1)];
  const bytes = Buffer.from(body, 'base64');
  bytes[14]! ^= 1;
  assert.throws(() => box.open(head + bytes.toString('base64'), place), SecretUnreadable);
  assert.throws(() => box.open(head + 'AAAA', place), SecretUnreadable);
});

test('a value sealed with another key names both key ids, not the value', () => {
  const one = SecretBox.generate('/var/lib/slipway.secrets-key').box;
  const two = SecretBox.generate('/var/lib/slipway.secrets-key').box;
  const sealed = one.seal('s3cret', place);
  assert.throws(
    () => two.open(sealed, place),
    (e: unknown) =>
      e instanceof SecretUnreadable && e.message.includes(one.id) && e.message.includes(two.id) && !e.message.includes('s3cret'),
  );
});

test('a value put in clear into the store behind its back is refused', () => {
  const { box } = SecretBox.generate('test key');
  assert.throws(
    () => box.open('plain', place),
    (e: unknown) => e instanceof SecretUnreadable && /in clear/.test(e.message),
  );
});
