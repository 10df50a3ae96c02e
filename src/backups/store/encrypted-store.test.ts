import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { BackupObjectDamaged, BackupObjectMissing, BackupStoreError, type BackupStore, type StoredObject } from './backup-store.js';
import { backupKeyFromBytes, CHUNK_BYTES, EncryptedBackupStore, HEADER_BYTES, loadBackupKey, V1_HEADER_BYTES } from './encrypted-store.js';

/** Objects in memory, so a test can cut and change the stored bytes. */
class MemoryStore implements BackupStore {
  readonly objects = new Map<string, Buffer>();
  async put(key: string, body: Readable) {
    const bytes = await buffer(body);
    this.objects.set(key, bytes);
    return { sizeBytes: bytes.length };
  }
  async get(key: string) {
    const bytes = this.objects.get(key);
    if (!bytes) throw new BackupObjectMissing(key);
    // In pieces of odd sizes, as a network or a file gives them.
    const pieces: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 40_000) pieces.push(bytes.subarray(i, i + 40_000));
    return Readable.from(pieces);
  }
  async list(prefix: string): Promise<StoredObject[]> {
    return [...this.objects]
      .filter(([key]) => key.startsWith(prefix))
      .map(([key, bytes]) => ({ key, sizeBytes: bytes.length, modifiedAt: new Date() }));
  }
  async delete(key: string) {
    this.objects.delete(key);
  }
  describe() {
    return 'memory';
  }
}

const SEALED = CHUNK_BYTES + 16;
const keyA = backupKeyFromBytes(Buffer.from('a'.repeat(64)), '/etc/slipway/backup-key');
const keyB = backupKeyFromBytes(Buffer.from('b'.repeat(64)), '/etc/slipway/other-key');

function stores(key = keyA) {
  const memory = new MemoryStore();
  return { memory, store: new EncryptedBackupStore(memory, key) };
}

/** Sends `bytes` in pieces of varied sizes, none aligned to a chunk. */
function piecesOf(bytes: Buffer): Readable {
  const pieces: Buffer[] = [];
  let size = 1;
  for (let i = 0; i < bytes.length; i += size, size = (size * 7 + 3) % 100_003) pieces.push(bytes.subarray(i, i + size));
  return Readable.from(pieces);
}

async function readAll(store: BackupStore, key: string): Promise<Buffer> {
  return buffer(await store.get(key));
}

test('objects of every size at the chunk edges come back as they were', async () => {
  const { memory, store } = stores();
  const sizes = [0, 1, CHUNK_BYTES - 1, CHUNK_BYTES, CHUNK_BYTES + 1, 2 * CHUNK_BYTES, 5 * 1024 * 1024 + 3];
  for (const size of sizes) {
    const plain = randomBytes(size);
    const { sizeBytes } = await store.put(`object-${size}`, piecesOf(plain));
    const chunks = Math.max(1, Math.ceil(size / CHUNK_BYTES));
    assert.equal(sizeBytes, HEADER_BYTES + size + 16 * chunks, `stored size of ${size} bytes`);
    assert.equal(memory.objects.get(`object-${size}`)!.length, sizeBytes);
    assert.ok((await readAll(store, `object-${size}`)).equals(plain), `${size} bytes`);
  }
  assert.equal((await store.list('object-')).length, sizes.length);
});

test('the stored bytes do not show the backup, and differ each time the same backup is written', async () => {
  const { memory, store } = stores();
  const plain = Buffer.from('CREATE TABLE secrets (password text); '.repeat(100));
  await store.put('one', Readable.from([plain]));
  await store.put('two', Readable.from([plain]));
  const one = memory.objects.get('one')!;
  const two = memory.objects.get('two')!;
  assert.ok(!one.includes(Buffer.from('CREATE TABLE')));
  assert.ok(!one.subarray(HEADER_BYTES).equals(two.subarray(HEADER_BYTES)));
  assert.equal(one.subarray(0, 4).toString(), 'SWBK');
});

test('an object written with another key is refused before any decryption, naming both key ids', async () => {
  const { memory, store } = stores(keyA);
  await store.put('postgresql/base/1', Readable.from([Buffer.from('data')]));
  const other = new EncryptedBackupStore(memory, keyB);
  await assert.rejects(other.get('postgresql/base/1'), (e: unknown) => {
    assert.ok(e instanceof BackupObjectDamaged);
    assert.match(e.message, /was written with another key/);
    assert.ok(e.message.includes(`key id ${keyA.id}`) && e.message.includes(`key id ${keyB.id}`), e.message);
    assert.ok(e.message.includes('/etc/slipway/other-key'));
    return true;
  });
  assert.notEqual(keyA.id, keyB.id);
  assert.match(keyA.id, /^[0-9a-f]{16}$/);
});

test('a missing object is still BackupObjectMissing', async () => {
  const { store } = stores();
  await assert.rejects(store.get('nothing'), BackupObjectMissing);
});

test('an object cut short anywhere is reported as cut short, never returned whole', async () => {
  const { memory, store } = stores();
  const plain = randomBytes(3 * CHUNK_BYTES + 500);
  await store.put('full', Readable.from([plain]));
  const full = memory.objects.get('full')!;
  const cuts = [
    0,
    3,
    V1_HEADER_BYTES - 1,
    V1_HEADER_BYTES,
    HEADER_BYTES - 1,
    HEADER_BYTES,
    HEADER_BYTES + 10,
    HEADER_BYTES + SEALED - 1,
    HEADER_BYTES + SEALED,
    HEADER_BYTES + 2 * SEALED,
    full.length - 16,
    full.length - 1,
  ];
  for (const cut of cuts) {
    memory.objects.set('full', full.subarray(0, cut));
    await assert.rejects(readAll(store, 'full'), (e: unknown) => {
      assert.ok(e instanceof BackupObjectDamaged, `cut at ${cut}: ${e}`);
      assert.match(e.message, /is damaged: .*(cut short)/, `cut at ${cut}`);
      return true;
    });
  }
  memory.objects.set('full', full.subarray(0, HEADER_BYTES + SEALED));
  await assert.rejects(readAll(store, 'full'), /ends after chunk 0, which was not written as its last one/);
});

test('a flipped bit anywhere is detected', async () => {
  const { memory, store } = stores();
  const plain = randomBytes(2 * CHUNK_BYTES + 100);
  await store.put('full', Readable.from([plain]));
  const full = memory.objects.get('full')!;
  const places = [
    { at: V1_HEADER_BYTES - 1, why: /chunk 0 fails its authentication check/ }, // nonce prefix
    { at: HEADER_BYTES - 1, why: /was not written under this name/ }, // name tag
    { at: HEADER_BYTES + 5, why: /chunk 0 fails its authentication check/ },
    { at: HEADER_BYTES + SEALED + 1000, why: /chunk 1 fails its authentication check/ },
    { at: HEADER_BYTES + SEALED - 1, why: /chunk 0 fails its authentication check/ }, // a tag
    { at: full.length - 1, why: /chunk 2 fails its authentication check/ },
    { at: 4, why: /encryption format version/ },
    { at: 7, why: /written with another key/ },
    { at: 0, why: /not an encrypted slipway backup/ },
  ];
  for (const { at, why } of places) {
    const altered = Buffer.from(full);
    altered[at]! ^= 0x01;
    memory.objects.set('full', altered);
    await assert.rejects(readAll(store, 'full'), (e: unknown) => e instanceof BackupObjectDamaged && why.test(e.message), `bit at ${at}`);
  }
});

test('chunks reordered, or taken from another object, are detected', async () => {
  const { memory, store } = stores();
  await store.put('a', Readable.from([randomBytes(3 * CHUNK_BYTES + 1)]));
  await store.put('b', Readable.from([randomBytes(3 * CHUNK_BYTES + 1)]));
  const a = memory.objects.get('a')!;
  const b = memory.objects.get('b')!;
  const chunk = (bytes: Buffer, i: number) => bytes.subarray(HEADER_BYTES + i * SEALED, HEADER_BYTES + (i + 1) * SEALED);
  const header = a.subarray(0, HEADER_BYTES);
  const rest = a.subarray(HEADER_BYTES + 3 * SEALED);

  memory.objects.set('a', Buffer.concat([header, chunk(a, 1), chunk(a, 0), chunk(a, 2), rest]));
  await assert.rejects(readAll(store, 'a'), /chunk 0 fails its authentication check/);
  memory.objects.set('a', Buffer.concat([header, chunk(a, 0), chunk(a, 2), rest]));
  await assert.rejects(readAll(store, 'a'), /chunk 1 fails its authentication check/);
  memory.objects.set('a', Buffer.concat([header, chunk(a, 0), chunk(b, 1), chunk(a, 2), rest]));
  await assert.rejects(readAll(store, 'a'), /chunk 1 fails its authentication check/);
  memory.objects.set('a', Buffer.concat([header, chunk(a, 0), chunk(a, 1), chunk(a, 2), b.subarray(HEADER_BYTES + 3 * SEALED)]));
  await assert.rejects(readAll(store, 'a'), /chunk 3 fails its authentication check/);
});

test('an object moved or copied to another name, or another add-on, is refused as such', async () => {
  const { memory, store } = stores();
  await store.put('redis/addon_a/backup_1.rdb', Readable.from([Buffer.from('tenant a')]));
  await store.put('redis/addon_b/backup_2.rdb', Readable.from([Buffer.from('tenant b')]));
  // B's snapshot put where A's was: a restore of A would load B's data.
  memory.objects.set('redis/addon_a/backup_1.rdb', memory.objects.get('redis/addon_b/backup_2.rdb')!);
  await assert.rejects(
    store.get('redis/addon_a/backup_1.rdb'),
    (e: unknown) =>
      e instanceof BackupObjectDamaged &&
      e.message.startsWith('backup object redis/addon_a/backup_1.rdb was not written under this name: refusing to restore it'),
  );
  // An older object of the same add-on replayed under a newer name is refused too.
  memory.objects.set('redis/addon_b/backup_3.rdb', memory.objects.get('redis/addon_b/backup_2.rdb')!);
  await assert.rejects(store.get('redis/addon_b/backup_3.rdb'), /was not written under this name/);
  assert.equal((await readAll(store, 'redis/addon_b/backup_2.rdb')).toString(), 'tenant b');
});

test('an object written before names were bound (format version 1) is still read, and still checked', async () => {
  const { memory, store } = stores();
  const plain = randomBytes(CHUNK_BYTES + 10);
  const header = Buffer.concat([Buffer.from('SWBK'), Buffer.of(1), Buffer.from(keyA.id, 'hex'), randomBytes(8)]);
  const seal = (index: number, part: Buffer, last: boolean) => {
    const nonce = Buffer.concat([header.subarray(13, 21), Buffer.alloc(4)]);
    nonce.writeUInt32BE(index, 8);
    const cipher = createCipheriv('aes-256-gcm', keyA.encryptionKey, nonce);
    const tail = Buffer.alloc(9);
    tail.writeBigUInt64BE(BigInt(index), 0);
    tail[8] = last ? 1 : 0;
    cipher.setAAD(Buffer.concat([header, tail]));
    return Buffer.concat([cipher.update(part), cipher.final(), cipher.getAuthTag()]);
  };
  const old = Buffer.concat([header, seal(0, plain.subarray(0, CHUNK_BYTES), false), seal(1, plain.subarray(CHUNK_BYTES), true)]);
  memory.objects.set('postgresql/wal/000000010000000000000003', old);
  assert.deepEqual(await readAll(store, 'postgresql/wal/000000010000000000000003'), plain);
  const altered = Buffer.from(old);
  altered[V1_HEADER_BYTES + 3]! ^= 1;
  memory.objects.set('postgresql/wal/000000010000000000000003', altered);
  await assert.rejects(readAll(store, 'postgresql/wal/000000010000000000000003'), /chunk 0 fails its authentication check/);
});

test('a backup written without encryption is named as such', async () => {
  const { memory, store } = stores();
  await memory.put('plain', Readable.from([Buffer.from('PGDMP plain dump, long enough to fill a header')]));
  await assert.rejects(
    store.get('plain'),
    (e: unknown) =>
      e instanceof BackupObjectDamaged && /is not an encrypted slipway backup/.test(e.message) && /without the key file/.test(e.hint!),
  );
  memory.objects.set('short', Buffer.from('PG'));
  await assert.rejects(store.get('short'), /is not an encrypted slipway backup/);
});

test('describe names the inner store and the key id, never the key', () => {
  const { store } = stores();
  const text = store.describe();
  assert.equal(text, `memory, encrypted with the key in /etc/slipway/backup-key (key id ${keyA.id})`);
  assert.ok(!text.includes('aaaa'));
});

test('the key file: at least 32 bytes, its owner alone may read it, a final line ending is not part of the key', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-backup-key-'));
  const file = join(dir, 'key');
  const key = randomBytes(32).toString('hex');
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  const loaded = await loadBackupKey(file);
  assert.equal(loaded.id, backupKeyFromBytes(Buffer.from(key), file).id);
  writeFileSync(file, `${key}\r\n`);
  assert.equal((await loadBackupKey(file)).id, loaded.id);

  for (const mode of [0o640, 0o604, 0o620]) {
    chmodSync(file, mode);
    await assert.rejects(
      loadBackupKey(file),
      (e: unknown) => e instanceof BackupStoreError && /by others than its owner/.test(e.message) && /chmod 600/.test(e.hint!),
    );
  }
  chmodSync(file, 0o400);
  await loadBackupKey(file);

  writeFileSync(join(dir, 'short'), 'x'.repeat(31), { mode: 0o600 });
  await assert.rejects(loadBackupKey(join(dir, 'short')), /holds 31 bytes; a backup key has at least 32/);
  writeFileSync(join(dir, 'short-with-newline'), `${'x'.repeat(31)}\n`, { mode: 0o600 });
  await assert.rejects(loadBackupKey(join(dir, 'short-with-newline')), /holds 31 bytes/);
  await assert.rejects(loadBackupKey(join(dir, 'missing')), /Cannot read the backup key file .*no such file/);
});

test('a reader that stops early releases the stored stream', async () => {
  const { store } = stores();
  await store.put('big', Readable.from([randomBytes(4 * CHUNK_BYTES)]));
  const stream = await store.get('big');
  for await (const piece of stream) {
    assert.ok(piece.length > 0);
    break;
  }
  assert.ok(stream.destroyed);
});
