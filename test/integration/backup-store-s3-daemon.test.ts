/**
 * A daemon whose backups go to a real S3-compatible server (SeaweedFS) encrypted with the
 * operator's key: a PostgreSQL add-on's backup is stored there (as ciphertext, not a tar) and
 * restore-tested from there; a daemon started with another key fails the restore test saying
 * the backup was written with another key, and with the right key again it restores. Then the
 * whole platform, with an app pushed twice, goes to the same bucket (`system backup`, encrypted;
 * a second backup shares the release archives), and `server --restore-from latest` on a fresh
 * data folder brings it back from there: the app serves, and `slipway rollback` goes back to
 * the first push's release without a build. An FS bucket's image goes there sealed too, is
 * restore-tested from there and restores `--as`; the platform restore brings the buckets back.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import pg from 'pg';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp, getThroughRouter, newRelease, pushAndWait, registerSshKey } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';
import { restoreTested } from '../support/addon-cli.js';
import { seaweedfsBinary, startS3Server, type TestS3Server } from '../support/s3-server.js';

const binary = seaweedfsBinary();
const skip = 'missing' in binary ? binary.missing : false;
if (skip) console.log(`Skipping the S3 daemon backup tests: ${skip}.`);

let server: TestS3Server;
let daemon: TestDaemon;
let restored: TestDaemon | undefined;
let client: S3Client;
const dir = mkdtempSync(join(tmpdir(), 'slipway-backups-s3-'));
const keyFile = join(dir, 'backup.key');
const otherKeyFile = join(dir, 'other.key');
const credentialsFile = join(dir, 's3-credentials');
let backupId: string;

const daemonArgs = (key: string) => [
  '--backup-s3-url',
  `${server.endpoint}/backups/platform`,
  '--backup-s3-credentials-file',
  credentialsFile,
  '--backup-key-file',
  key,
];

async function cliJson<T>(args: string[]): Promise<T> {
  const result = await daemon.cli([...args, '--format', 'json'], { timeoutMs: 600_000 });
  assert.equal(result.code, 0, `slipway ${args.join(' ')} failed:\n${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

before(async () => {
  if (skip) return;
  server = await startS3Server({ bucket: 'backups' });
  writeFileSync(keyFile, randomBytes(32).toString('hex'), { mode: 0o600 });
  writeFileSync(otherKeyFile, randomBytes(32).toString('hex'), { mode: 0o600 });
  writeFileSync(credentialsFile, `access_key_id=${server.accessKeyId}\nsecret_access_key=${server.secretAccessKey}\n`, { mode: 0o600 });
  client = new S3Client({
    endpoint: server.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  });
  daemon = await startDaemon(daemonArgs(keyFile));
});

after(async () => {
  client?.destroy();
  if (restored) await restored.stop();
  if (daemon) await daemon.stop();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a backup goes to the S3 store encrypted, and is restore-tested from there', { skip }, async () => {
  assert.match(daemon.output(), /Add-on backups go to .*backups.*encrypted with the key in/);
  const appId = await createApp(daemon, mkdtempSync(join(dir, 'app-')), 'shop');
  await cliJson(['addon', 'create', 'postgresql', 'db', '--link', appId]);
  const env = await cliJson<Array<{ name: string; value: string }>>(['addon', 'env', 'db']);
  const db = new pg.Client({ connectionString: env.find((v) => v.name === 'POSTGRESQL_ADDON_URI')!.value });
  await db.connect();
  await db.query('CREATE TABLE t (v int); INSERT INTO t SELECT generate_series(1, 500)');
  await db.end();
  const taken = await daemon.cli(['addon', 'backup', 'db'], { timeoutMs: 600_000 });
  assert.equal(taken.code, 0, taken.stderr);
  backupId = taken.stdout.trim();
  const backup = await restoreTested(daemon, 'db', backupId);
  assert.equal(backup.verification, 'verified', backup.verification_detail);
  assert.match(backup.verification_detail, /1 table, 500 rows as counted/);

  const listed = await client.send(new ListObjectsV2Command({ Bucket: 'backups', Prefix: 'platform/' }));
  const keys = (listed.Contents ?? []).map((o) => o.Key!);
  // The add-on's own server's base backups and archive: postgresql/<add-on id>/base/, /wal/.
  const base = keys.find((k) => /^platform\/postgresql\/addon_[0-9a-f-]+\/base\//.test(k));
  assert.ok(base, `a base backup in the bucket (${keys.join(', ')})`);
  assert.ok(
    keys.some((k) => /^platform\/postgresql\/addon_[0-9a-f-]+\/wal\//.test(k)),
    'archived WAL in the bucket',
  );
  const head = Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: 'backups', Key: base }))).Body!.transformToByteArray());
  assert.notEqual(head.subarray(257, 262).toString('latin1'), 'ustar', 'not a readable tar');
  assert.ok(!head.includes(Buffer.from('PG_VERSION')), 'no file name of the cluster readable in it');
  // The S3 client was made and used: its notice about future Node.js versions is not the operator's.
  assert.doesNotMatch(daemon.output(), /NodeVersionSupportWarning|AWS SDK for JavaScript/);
});

test('with another key the restore test fails saying so; with the right key it restores again', { skip }, async () => {
  await daemon.terminate();
  await daemon.restart({ extraArgs: daemonArgs(otherKeyFile) });
  const wrong = await daemon.cli(['addon', 'backup', 'verify', 'db', backupId], { timeoutMs: 600_000 });
  assert.notEqual(wrong.code, 0);
  assert.match(wrong.stderr, /failed its restore test: .*another key/);
  await daemon.terminate();
  await daemon.restart({ extraArgs: daemonArgs(keyFile) });
  const right = await daemon.cli(['addon', 'backup', 'verify', 'db', backupId], { timeoutMs: 600_000 });
  assert.equal(right.code, 0, right.stderr);
  assert.match(
    right.stdout,
    /verified \(\d+ stored objects match their SHA-256; every file of the base backup matches its manifest; restored and started; pg_amcheck found no corruption; 1 table, 500 rows as counted\)/,
  );
});

test("an FS bucket's image goes to the S3 store encrypted, is restore-tested from there and restores --as", { skip }, async () => {
  const bucket = await cliJson<{ id: string }>(['addon', 'create', 'fs-bucket', 'files', '--plan', '16M']);
  const { id } = await cliJson<{ id: string }>(['addon', 'backup', 'files']);
  const backup = await restoreTested(daemon, 'files', id, 120_000);
  assert.equal(backup.verification, 'verified', backup.verification_detail);
  assert.match(
    backup.verification_detail,
    /the image unpacked matches the SHA-256 taken at the snapshot; e2fsck -fn finds the filesystem clean/,
  );
  const key = `platform/fs-bucket/${bucket.id}/${id}.img.tar.gz`;
  const stored = Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: 'backups', Key: key }))).Body!.transformToByteArray());
  assert.equal(stored.subarray(0, 4).toString('latin1'), 'SWBK', 'sealed, not a gzip');
  await cliJson(['addon', 'restore', 'files', '--backup', id, '--as', 'files-copy']);
  const copy = (await cliJson<Array<{ name: string; bucket?: { size_bytes: number; used_bytes: number | null } }>>(['addon', 'list'])).find(
    (a) => a.name === 'files-copy',
  );
  assert.equal(copy?.bucket?.size_bytes, 16 * 1024 ** 2);
  assert.notEqual(copy?.bucket?.used_bytes, null, 'mounted');
});

test('the whole platform goes to the S3 store encrypted, and a fresh data folder is restored from there', { skip }, async () => {
  // The add-on's data in a platform backup is the tests' above and platform-backup.test.ts's: the
  // small test server (volumes of 64 MB) holds the platform's releases, not two more clusters.
  const deleted = await daemon.cli(['addon', 'delete', 'db', '--yes', '--unlink'], { timeoutMs: 120_000 });
  assert.equal(deleted.code, 0, deleted.stderr);
  const { gitEnv } = await registerSshKey(daemon);
  const app = checkoutExample('node-hello');
  const appId = await createApp(daemon, app, 'web');
  const first = await pushAndWait(daemon, app, appId, gitEnv);
  assert.equal(first.state, 'OK', first.push);
  newRelease(app, 'second');
  const second = await pushAndWait(daemon, app, appId, gitEnv);
  assert.equal(second.state, 'OK', second.push);

  type Report = { name: string; place: string; encrypted: boolean; releases: number; shared_releases: number };
  const report = await cliJson<Report>(['system', 'backup']);
  assert.match(report.place, /backups.*encrypted with the key in/);
  assert.deepEqual([report.encrypted, report.releases, report.shared_releases], [true, 2, 0]);
  const listed = await client.send(new ListObjectsV2Command({ Bucket: 'backups', Prefix: 'platform/platform/' }));
  const keys = (listed.Contents ?? []).map((o) => o.Key!);
  const object = async (key: string) =>
    Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: 'backups', Key: key }))).Body!.transformToByteArray());
  const storeFile = await object(`platform/platform/${report.name}/slipway.db`);
  assert.equal(storeFile.subarray(0, 4).toString('latin1'), 'SWBK', 'the store is sealed');
  assert.ok(!storeFile.includes(Buffer.from('SQLite format 3')), 'not a readable SQLite file');
  const archives = keys.filter((k) => k.startsWith(`platform/platform/releases/${appId}/`));
  assert.equal(archives.length, 2, keys.join(', '));
  assert.notEqual((await object(archives[0]!)).subarray(257, 262).toString('latin1'), 'ustar', 'not a readable tar');
  // A second backup names the same release archives rather than copying them again.
  const again = await cliJson<Report>(['system', 'backup']);
  assert.equal(again.shared_releases, 2);

  // A new machine: a fresh data folder, the same store and key, the newest backup in it.
  await daemon.stop();
  restored = await startDaemon(['--restore-from', 'latest', ...daemonArgs(keyFile)], { emptyDataFolder: true });
  const machine = restored;
  assert.match(machine.output(), new RegExp(`Restoring the platform backup .*${again.name}`));
  const served = await waitUntil(
    'the restored app to serve its second release',
    async () => {
      const response = await getThroughRouter(machine, `${appId}.localhost`).catch(() => undefined);
      return response?.status === 200 ? (JSON.parse(response.body) as { commitId: string }) : undefined;
    },
    300_000,
  );
  assert.equal(served.commitId, second.commit);
  const rolledBack = await machine.cli(['rollback', '--app', appId], { timeoutMs: 300_000 });
  assert.equal(rolledBack.code, 0, rolledBack.stderr);
  const previous = JSON.parse((await getThroughRouter(machine, `${appId}.localhost`)).body) as { commitId: string };
  assert.equal(previous.commitId, first.commit);
  assert.doesNotMatch(machine.output(), /is built again from commit/);
  assert.match(machine.output(), /Restored the images of 2 FS bucket\(s\)/);
});
