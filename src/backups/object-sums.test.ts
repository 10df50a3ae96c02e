import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, statSync, truncateSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { Store } from '../store/store.js';
import { BackupObjectDamaged, BackupObjectMissing } from './store/backup-store.js';
import { backupKeyFromBytes, EncryptedBackupStore } from './store/encrypted-store.js';
import { FolderBackupStore } from './store/folder-store.js';
import { describeSumCheck, ObjectSums, SumRecordingStore } from './object-sums.js';

const KEY = 'postgresql/base/000000010000000000000002-abcd.tar';

/** A store as the daemon wires it: a folder, the sums in a real database, the lines it logs. */
async function setUp() {
  const root = mkdtempSync(join(tmpdir(), 'slipway-object-sums-'));
  const db = Store.open(join(root, 'slipway.db'));
  const folder = join(root, 'backups');
  const raw = await FolderBackupStore.open(folder);
  const store = new SumRecordingStore(raw, db.backupObjectSums);
  const logged: string[] = [];
  const sums = new ObjectSums({ store, book: db.backupObjectSums, log: (line) => logged.push(line) });
  return { root, db, folder, raw, store, sums, logged };
}

/** Several chunks, as a streamed base backup comes. */
function chunks(data: Buffer): Readable {
  return Readable.from([data.subarray(0, 1000), data.subarray(1000, 70_000), data.subarray(70_000)]);
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** Overwrites bytes in the middle of a file, leaving its size as it was. */
function overwriteMiddle(path: string): void {
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.from('tampered'), 0, 8, Math.floor(statSync(path).size / 2));
  closeSync(fd);
}

test('a put records the size and SHA-256 of the bytes streamed, in the database and not in the store', async () => {
  const { db, raw, store } = await setUp();
  const data = randomBytes(200_000);
  assert.deepEqual(await store.put(KEY, chunks(data)), { sizeBytes: 200_000 });
  assert.deepEqual(db.backupObjectSums.of(KEY), { size_bytes: 200_000, sha256: sha256(data) });
  assert.deepEqual(await buffer(await store.get(KEY)), data, 'the object is stored as it came');
  assert.deepEqual(
    (await raw.list('')).map((o) => o.key),
    [KEY],
    'nothing but the object is written to the store',
  );
});

test('a check passes on objects as stored and says how many it checked', async () => {
  const { store, sums, logged } = await setUp();
  await store.put(KEY, chunks(randomBytes(100_000)));
  await store.put('postgresql/wal/000000010000000000000002', Readable.from([randomBytes(5000)]));
  const check = await sums.check([KEY, 'postgresql/wal/000000010000000000000002'], 'The restore');
  assert.deepEqual(check, { checked: 2, unchecked: [] });
  assert.equal(describeSumCheck(check), '2 stored objects match their SHA-256');
  assert.deepEqual(logged, []);
});

test('bytes overwritten in the middle of an object fail the check, naming the object, what was recorded and what is there', async () => {
  const { folder, store, sums } = await setUp();
  const data = randomBytes(100_000);
  await store.put(KEY, chunks(data));
  overwriteMiddle(join(folder, KEY));
  const found = createHash('sha256');
  found.update(data.subarray(0, 50_000)).update(Buffer.from('tampered')).update(data.subarray(50_008));
  await assert.rejects(
    sums.check([KEY], 'The restore'),
    (error: unknown) =>
      error instanceof BackupObjectDamaged &&
      error.key === KEY &&
      error.message ===
        `backup object ${KEY} changed since it was stored: 100000 bytes with SHA-256 ${sha256(data)} were recorded, ` +
          `100000 bytes with SHA-256 ${found.digest('hex')} are there now` &&
      /use another backup/.test(error.hint ?? ''),
  );
});

test('a cut object fails on its size; a missing one is named as missing', async () => {
  const { folder, raw, store, sums } = await setUp();
  await store.put(KEY, chunks(randomBytes(100_000)));
  truncateSync(join(folder, KEY), 30_000);
  await assert.rejects(sums.check([KEY], 'The restore'), /100000 bytes with SHA-256 [0-9a-f]{64} were recorded, 30000 bytes with SHA-256/);
  await raw.delete(KEY);
  await assert.rejects(sums.check([KEY], 'The restore'), (error) => error instanceof BackupObjectMissing && error.key === KEY);
});

test('an object stored before sums were recorded is accepted unchecked, and a line names it', async () => {
  const { raw, store, sums, logged } = await setUp();
  await raw.put('postgresql/wal/000000010000000000000001', Readable.from([Buffer.from('old segment')]));
  await store.put(KEY, chunks(randomBytes(80_000)));
  const check = await sums.check([KEY, 'postgresql/wal/000000010000000000000001'], 'The restore from x');
  assert.deepEqual(check, { checked: 1, unchecked: ['postgresql/wal/000000010000000000000001'] });
  assert.equal(describeSumCheck(check), '1 stored object matches its SHA-256; 1 stored before sums were recorded, not checked');
  assert.deepEqual(logged, [
    'The restore from x: 1 backup object stored before sums were recorded, used unchecked: postgresql/wal/000000010000000000000001.',
  ]);
});

test('a delete forgets the sum; a failed put records nothing and keeps the sum of the object that stays', async () => {
  const { db, store, sums } = await setUp();
  const first = randomBytes(10_000);
  await store.put(KEY, Readable.from([first]));
  const failing = new Readable({
    read() {
      this.destroy(new Error('pg_basebackup died'));
    },
  });
  await assert.rejects(store.put(KEY, failing), /pg_basebackup died/);
  assert.deepEqual(db.backupObjectSums.of(KEY), { size_bytes: 10_000, sha256: sha256(first) });
  assert.deepEqual(await sums.check([KEY], 'The restore'), { checked: 1, unchecked: [] }, 'the object left is the first one');
  await store.delete(KEY);
  assert.equal(db.backupObjectSums.of(KEY), undefined);
});

test('over an encrypted store the sums are of the bytes slipway wrote, so they hold after a copy sealed anew', async () => {
  const { root, db } = await setUp();
  const key = backupKeyFromBytes(randomBytes(32), 'test-key');
  const first = new SumRecordingStore(new EncryptedBackupStore(await FolderBackupStore.open(join(root, 'a')), key), db.backupObjectSums);
  const data = randomBytes(150_000);
  await first.put(KEY, chunks(data));
  assert.deepEqual(db.backupObjectSums.of(KEY), { size_bytes: 150_000, sha256: sha256(data) });
  // A platform restore copies the objects into another store, sealed again (another nonce).
  const second = new EncryptedBackupStore(await FolderBackupStore.open(join(root, 'b')), key);
  await second.put(KEY, await first.get(KEY));
  const sums = new ObjectSums({ store: second, book: db.backupObjectSums, log: () => undefined });
  assert.deepEqual(await sums.check([KEY], 'The restore'), { checked: 1, unchecked: [] });
});
