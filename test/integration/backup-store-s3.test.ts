/**
 * The S3 backup store, and the encrypted store over it, against a real S3-compatible server
 * (SeaweedFS, test/support/s3-server.ts): objects below and above the multipart threshold, a
 * missing object, credentials the server refuses, a bucket that does not exist.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { BackupObjectDamaged, BackupObjectMissing, BackupStoreError, type BackupStore } from '../../src/backups/store/backup-store.js';
import { CHUNK_BYTES } from '../../src/backups/store/encrypted-store.js';
import { openBackupStore } from '../../src/backups/store/open-store.js';
import { S3BackupStore } from '../../src/backups/store/s3-store.js';
import { seaweedfsBinary, startS3Server, type TestS3Server } from '../support/s3-server.js';

const binary = seaweedfsBinary();
const skip = 'missing' in binary ? binary.missing : false;
if (skip) console.log(`Skipping the S3 backup store tests: ${skip}.`);

/** The smallest part S3 allows: an object past it goes as a multipart upload. */
const PART = 5 * 1024 * 1024;

let server: TestS3Server;
let dir: string;
const opened: BackupStore[] = [];

function envFor(s: TestS3Server, secret = s.secretAccessKey): NodeJS.ProcessEnv {
  return { AWS_ACCESS_KEY_ID: s.accessKeyId, AWS_SECRET_ACCESS_KEY: secret };
}

async function open(options: Partial<Parameters<typeof openBackupStore>[0]> & { s3Url: string }): Promise<BackupStore> {
  const store = await openBackupStore({ env: envFor(server), s3PartSizeBytes: PART, ...options });
  opened.push(store);
  return store;
}

/** Sends `bytes` in pieces of 1 MiB, as a dump's pipe would. */
function streamOf(bytes: Buffer): Readable {
  const pieces: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 1024 * 1024) pieces.push(bytes.subarray(i, i + 1024 * 1024));
  return Readable.from(pieces);
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

before(async () => {
  if (skip) return;
  server = await startS3Server({ bucket: 'backups' });
  dir = mkdtempSync(join(tmpdir(), 'slipway-backup-store-s3-'));
});

after(async () => {
  for (const store of opened) store.close?.();
  await server?.stop();
});

test('objects of several sizes, one past the multipart threshold, are stored, listed, read back and deleted', { skip }, async () => {
  const store = await open({ s3Url: `${server.endpoint}/backups/slipway/plain` });
  assert.ok(store instanceof S3BackupStore);
  const objects = new Map<string, Buffer>([
    ['postgresql/a/base/empty', Buffer.alloc(0)],
    ['postgresql/a/base/small.dump', Buffer.from('PGDMP a small dump')],
    ['postgresql/a/wal/000000010000000000000001', randomBytes(PART - 1)],
    ['postgresql/a/base/large.dump', randomBytes(2 * PART + 12_345)],
  ]);
  for (const [key, bytes] of objects) assert.deepEqual(await store.put(key, streamOf(bytes)), { sizeBytes: bytes.length }, key);
  for (const [key, bytes] of objects) assert.equal(sha(await buffer(await store.get(key))), sha(bytes), key);

  const listed = await store.list('postgresql/a/');
  assert.deepEqual(
    listed.map((o) => [o.key, o.sizeBytes]),
    [
      'postgresql/a/base/empty',
      'postgresql/a/base/large.dump',
      'postgresql/a/base/small.dump',
      'postgresql/a/wal/000000010000000000000001',
    ].map((key) => [key, objects.get(key)!.length]),
  );
  assert.ok(listed.every((o) => Math.abs(o.modifiedAt.getTime() - Date.now()) < 10 * 60_000));
  assert.deepEqual(
    (await store.list('postgresql/a/base/')).map((o) => o.key),
    ['postgresql/a/base/empty', 'postgresql/a/base/large.dump', 'postgresql/a/base/small.dump'],
  );

  // The prefix of the URL keeps stores apart in one bucket.
  const other = await open({ s3Url: `${server.endpoint}/backups/slipway/other` });
  assert.deepEqual(await other.list(''), []);

  await store.put('postgresql/a/base/small.dump', Readable.from([Buffer.from('a newer dump')]));
  assert.equal((await buffer(await store.get('postgresql/a/base/small.dump'))).toString(), 'a newer dump');

  await store.delete('postgresql/a/base/large.dump');
  await store.delete('postgresql/a/base/large.dump'); // already gone: not an error
  await assert.rejects(store.get('postgresql/a/base/large.dump'), BackupObjectMissing);
  assert.equal((await store.list('postgresql/a/base/')).length, 2);
});

test('a missing object is BackupObjectMissing', { skip }, async () => {
  const store = await open({ s3Url: `${server.endpoint}/backups/slipway/plain` });
  await assert.rejects(
    store.get('redis/b/never-written.rdb'),
    (e: unknown) => e instanceof BackupObjectMissing && e.key === 'redis/b/never-written.rdb',
  );
});

test('a stream that fails leaves nothing under its key, below or above the multipart threshold', { skip }, async () => {
  const store = await open({ s3Url: `${server.endpoint}/backups/slipway/failed` });
  for (const size of [1000, 2 * PART + 1]) {
    let sent = 0;
    const failing = new Readable({
      read() {
        if (sent >= size) return this.destroy(new Error('the dump ended badly'));
        const piece = randomBytes(Math.min(1024 * 1024, size - sent));
        sent += piece.length;
        this.push(piece);
      },
    });
    await assert.rejects(store.put(`failed-${size}`, failing), /the dump ended badly/);
    await assert.rejects(store.get(`failed-${size}`), BackupObjectMissing);
  }
  assert.deepEqual(await store.list(''), []);
});

test('credentials the server refuses are reported as such, without the secret', { skip }, async () => {
  const wrongSecret = 'not-the-right-secret-key-123';
  const store = await openBackupStore({ s3Url: `${server.endpoint}/backups`, env: envFor(server, wrongSecret) });
  opened.push(store);
  const refused = (e: unknown) => {
    assert.ok(e instanceof BackupStoreError, String(e));
    assert.match(e.message, new RegExp(`the S3 store at ${server.endpoint} refused the credentials from the environment`));
    assert.ok(!e.message.includes(wrongSecret) && !e.hint?.includes(wrongSecret));
    return true;
  };
  await assert.rejects(store.put('x', Readable.from([Buffer.from('x')])), refused);
  await assert.rejects(store.get('x'), refused);
  await assert.rejects(store.list(''), refused);

  const unknown = await openBackupStore({
    s3Url: `${server.endpoint}/backups`,
    env: { AWS_ACCESS_KEY_ID: 'nobody', AWS_SECRET_ACCESS_KEY: 'x' },
  });
  opened.push(unknown);
  await assert.rejects(
    unknown.list(''),
    /refused the credentials from the environment \(InvalidAccessKeyId: it does not know the access key\)/,
  );
});

test('a bucket that does not exist is reported as missing, not created', { skip }, async () => {
  const store = await open({ s3Url: `${server.endpoint}/no-such-bucket/slipway` });
  const missing = (e: unknown) =>
    e instanceof BackupStoreError &&
    e.message.includes(`there is no bucket "no-such-bucket" at ${server.endpoint}`) &&
    /Create the bucket/.test(e.hint!);
  await assert.rejects(store.list(''), missing);
  await assert.rejects(store.put('x', Readable.from([Buffer.from('x')])), missing);
  await assert.rejects(store.get('x'), missing);
  await assert.rejects(store.list(''), missing);
});

test('the encrypted store over S3: a round trip, and a backup written with another key is named as such', { skip }, async () => {
  const keyFile = join(dir, 'backup-key');
  writeFileSync(keyFile, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  const otherKeyFile = join(dir, 'other-key');
  writeFileSync(otherKeyFile, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  const s3Url = `${server.endpoint}/backups/slipway/encrypted`;
  const store = await open({ s3Url, keyFile });
  assert.match(store.describe(), /^the S3 bucket "backups" at .*, encrypted with the key in .*backup-key \(key id [0-9a-f]{16}\)$/);

  const small = Buffer.from('PGDMP secret rows');
  const large = randomBytes(PART + 3 * CHUNK_BYTES + 17);
  await store.put('postgresql/c/base/small.dump', Readable.from([small]));
  const { sizeBytes } = await store.put('postgresql/c/base/large.dump', streamOf(large));
  assert.ok(sizeBytes > large.length);
  assert.ok((await buffer(await store.get('postgresql/c/base/small.dump'))).equals(small));
  assert.equal(sha(await buffer(await store.get('postgresql/c/base/large.dump'))), sha(large));

  // What the bucket holds is not the backup.
  const raw = await open({ s3Url });
  const stored = await buffer(await raw.get('postgresql/c/base/small.dump'));
  assert.ok(!stored.includes(Buffer.from('secret rows')));
  assert.deepEqual(
    (await raw.list('postgresql/c/')).map((o) => [o.key, o.sizeBytes]),
    [
      ['postgresql/c/base/large.dump', sizeBytes],
      ['postgresql/c/base/small.dump', stored.length],
    ],
  );

  const withOtherKey = await open({ s3Url, keyFile: otherKeyFile });
  await assert.rejects(withOtherKey.get('postgresql/c/base/small.dump'), (e: unknown) => {
    assert.ok(e instanceof BackupObjectDamaged);
    assert.match(e.message, /was written with another key \(key id [0-9a-f]{16}\), not the one in .*other-key \(key id [0-9a-f]{16}\)/);
    return true;
  });

  // An object copied under another name is refused as swapped; one cut short in place is caught on the way back.
  const largeStored = await buffer(await raw.get('postgresql/c/base/large.dump'));
  await raw.put('postgresql/c/base/copied.dump', Readable.from([largeStored]));
  await assert.rejects(
    async () => buffer(await store.get('postgresql/c/base/copied.dump')),
    (e: unknown) => e instanceof BackupObjectDamaged && /was not written under this name/.test(e.message),
  );
  await raw.put('postgresql/c/base/large.dump', Readable.from([largeStored.subarray(0, 3 * CHUNK_BYTES)]));
  await assert.rejects(
    async () => buffer(await store.get('postgresql/c/base/large.dump')),
    (e: unknown) => e instanceof BackupObjectDamaged && /cut short/.test(e.message),
  );
});
