import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { BackupObjectMissing, BackupStoreError } from './backup-store.js';
import { FolderBackupStore } from './folder-store.js';

function scratch(): string {
  return mkdtempSync(join(tmpdir(), 'slipway-folder-store-'));
}

async function openStore() {
  const folder = join(scratch(), 'backups');
  return { folder, store: await FolderBackupStore.open(folder) };
}

/** A stream that gives `chunks` then fails, as a dump whose process died would. */
function failingAfter(chunks: Buffer[]): Readable {
  let i = 0;
  return new Readable({
    read() {
      if (i < chunks.length) this.push(chunks[i++]);
      else this.destroy(new Error('the dump ended badly'));
    },
  });
}

test('a missing folder is created with mode 0700, and an existing one is narrowed to it', async () => {
  const { folder } = await openStore();
  assert.equal(statSync(folder).mode & 0o777, 0o700);
  const open = join(scratch(), 'open');
  mkdirSync(open, { mode: 0o755 });
  await FolderBackupStore.open(open);
  assert.equal(statSync(open).mode & 0o777, 0o700);
});

test('a relative folder is refused, saying to give an absolute path', async () => {
  await assert.rejects(FolderBackupStore.open('backups'), (e: unknown) => e instanceof BackupStoreError && /absolute/.test(e.message));
});

test('objects are written, read back, replaced and deleted', async () => {
  const { folder, store } = await openStore();
  const body = Buffer.from('the dump');
  assert.deepEqual(await store.put('postgresql/base/2026-11-26.dump', Readable.from([body])), { sizeBytes: body.length });
  assert.deepEqual(await buffer(await store.get('postgresql/base/2026-11-26.dump')), body);
  assert.equal(statSync(join(folder, 'postgresql', 'base', '2026-11-26.dump')).mode & 0o777, 0o600);
  assert.equal(statSync(join(folder, 'postgresql', 'base')).mode & 0o777, 0o700);

  await store.put('postgresql/base/2026-11-26.dump', Readable.from([Buffer.from('a newer dump')]));
  assert.equal((await buffer(await store.get('postgresql/base/2026-11-26.dump'))).toString(), 'a newer dump');

  await store.delete('postgresql/base/2026-11-26.dump');
  await assert.rejects(store.get('postgresql/base/2026-11-26.dump'), BackupObjectMissing);
  await store.delete('postgresql/base/2026-11-26.dump'); // already gone: not an error
  await store.delete('nothing/here/at-all');
});

test('an empty object and a large one keep their exact bytes', async () => {
  const { store } = await openStore();
  assert.deepEqual(await store.put('empty', Readable.from([])), { sizeBytes: 0 });
  assert.equal((await buffer(await store.get('empty'))).length, 0);
  const large = Buffer.alloc(3 * 1024 * 1024 + 7, 0x5a);
  large.write('start', 0);
  const chunks = [large.subarray(0, 1000), large.subarray(1000, 2_000_000), large.subarray(2_000_000)];
  assert.deepEqual(await store.put('large', Readable.from(chunks)), { sizeBytes: large.length });
  assert.ok((await buffer(await store.get('large'))).equals(large));
});

test('a write that fails leaves nothing under its key, and keeps the object it would have replaced', async () => {
  const { folder, store } = await openStore();
  await assert.rejects(store.put('redis/dump.rdb', failingAfter([Buffer.from('half of a ')])), /ended badly/);
  await assert.rejects(store.get('redis/dump.rdb'), BackupObjectMissing);
  assert.deepEqual(readdirSync(join(folder, 'redis')), [], 'no temporary file is left behind');

  await store.put('redis/dump.rdb', Readable.from([Buffer.from('the good one')]));
  await assert.rejects(store.put('redis/dump.rdb', failingAfter([Buffer.from('a bad one')])), /ended badly/);
  assert.equal((await buffer(await store.get('redis/dump.rdb'))).toString(), 'the good one');
  assert.deepEqual(readdirSync(join(folder, 'redis')), ['dump.rdb']);
});

test('a missing object is BackupObjectMissing, whichever part of its path is missing', async () => {
  const { store } = await openStore();
  await store.put('a/b', Readable.from([Buffer.from('x')]));
  for (const key of ['a/c', 'x/y/z', 'a/b/c']) {
    await assert.rejects(store.get(key), (e: unknown) => e instanceof BackupObjectMissing && e.key === key, key);
  }
});

test('keys slipway would not make are refused before anything is touched', async () => {
  const { store } = await openStore();
  for (const key of ['', '/etc/passwd', '../outside', 'a/../../b', 'a//b', 'a/./b', 'a b', 'a/']) {
    await assert.rejects(store.put(key, Readable.from([Buffer.from('x')])), /is not a backup object key/, key);
    await assert.rejects(store.get(key), /is not a backup object key/, key);
    await assert.rejects(store.delete(key), /is not a backup object key/, key);
  }
  for (const prefix of ['/', '../', 'a/../b', 'a b']) {
    await assert.rejects(store.list(prefix), /is not a backup key prefix/, prefix);
  }
});

test('list gives the objects under a prefix, sorted by key, with their size and time', async () => {
  const { store } = await openStore();
  const keys = ['postgresql/wal/000000010000000000000002', 'postgresql/wal/000000010000000000000001', 'postgresql/base/1', 'redis/dump'];
  for (const key of keys) await store.put(key, Readable.from([Buffer.from(key)]));
  const all = await store.list('');
  assert.deepEqual(
    all.map((o) => o.key),
    [...keys].sort(),
  );
  assert.equal(all[0]!.sizeBytes, 'postgresql/base/1'.length);
  assert.ok(all[0]!.modifiedAt instanceof Date && Math.abs(all[0]!.modifiedAt.getTime() - Date.now()) < 60_000);
  assert.deepEqual(
    (await store.list('postgresql/wal/')).map((o) => o.key),
    ['postgresql/wal/000000010000000000000001', 'postgresql/wal/000000010000000000000002'],
  );
  assert.deepEqual(
    (await store.list('postgresql/wal/0000000100000000000000')).map((o) => o.key),
    ['postgresql/wal/000000010000000000000001', 'postgresql/wal/000000010000000000000002'],
  );
  assert.deepEqual(
    (await store.list('post')).map((o) => o.key),
    ['postgresql/base/1', 'postgresql/wal/000000010000000000000001', 'postgresql/wal/000000010000000000000002'],
  );
  assert.deepEqual(await store.list('mysql/'), []);
  assert.deepEqual(await store.list('redis/dump/'), []);
});

test('list skips temporary files of writes in progress and links', async () => {
  const { folder, store } = await openStore();
  await store.put('app/one', Readable.from([Buffer.from('1')]));
  writeFileSync(join(folder, 'app', '.two.abc.partial'), 'half');
  symlinkSync('/etc/hostname', join(folder, 'app', 'three'));
  assert.deepEqual(
    (await store.list('app/')).map((o) => o.key),
    ['app/one'],
  );
});

test('a symbolic link below the root is never followed: not for the object, not for a folder on the way', async () => {
  const { folder, store } = await openStore();
  const outside = scratch();
  writeFileSync(join(outside, 'secret'), 'not a backup');
  symlinkSync(join(outside, 'secret'), join(folder, 'linked-file'));
  symlinkSync(outside, join(folder, 'linked-folder'));

  await assert.rejects(store.get('linked-file'), (e: unknown) => e instanceof BackupStoreError && /symbolic link/.test(e.message));
  await assert.rejects(store.get('linked-folder/secret'), (e: unknown) => e instanceof BackupStoreError && /symbolic link/.test(e.message));
  await assert.rejects(store.put('linked-folder/new', Readable.from([Buffer.from('x')])), BackupStoreError);
  await assert.rejects(store.delete('linked-folder/secret'), BackupStoreError);
  await assert.rejects(store.delete('linked-file'), BackupStoreError);
  assert.deepEqual(readdirSync(outside), ['secret']);
  assert.equal(readFileSync(join(outside, 'secret'), 'utf8'), 'not a backup');
  assert.deepEqual(await store.list('linked-folder/'), []);
});

test('replacing a link with an object does not write through it', async () => {
  const { folder, store } = await openStore();
  const outside = scratch();
  writeFileSync(join(outside, 'target'), 'untouched');
  symlinkSync(join(outside, 'target'), join(folder, 'object'));
  await store.put('object', Readable.from([Buffer.from('the backup')]));
  assert.equal(readFileSync(join(outside, 'target'), 'utf8'), 'untouched');
  assert.equal((await buffer(await store.get('object'))).toString(), 'the backup');
});

test('the root itself may be a link, to put the backups on another disk', async () => {
  const base = scratch();
  mkdirSync(join(base, 'other-disk'), { mode: 0o700 });
  symlinkSync(join(base, 'other-disk'), join(base, 'backups'));
  const store = await FolderBackupStore.open(join(base, 'backups'));
  await store.put('x/y', Readable.from([Buffer.from('z')]));
  assert.equal(readFileSync(join(base, 'other-disk', 'x', 'y'), 'utf8'), 'z');
  assert.equal(store.describe(), `the folder ${join(base, 'backups')}`);
});

test('a key whose folder is an object, or whose object is a folder, is refused with what is there', async () => {
  const { store } = await openStore();
  await store.put('a', Readable.from([Buffer.from('x')]));
  await assert.rejects(store.put('a/b', Readable.from([Buffer.from('y')])), /which is a file, where a folder belongs/);
  await store.put('c/d', Readable.from([Buffer.from('x')]));
  await assert.rejects(store.put('c', Readable.from([Buffer.from('y')])), /is a folder/);
  await assert.rejects(store.get('c'), /is a folder/);
});
