/**
 * FS bucket backups through the CLI of a real daemon (issue 34, item 5): files an app wrote
 * into its bucket are backed up (the bucket frozen for the copy of its image) and restore-tested
 * (the image's SHA-256, e2fsck); after changes and deletions, a restore in place brings them
 * back to the app, its instances restarted without a failed request; `--as` makes a new bucket
 * of the backup's size; a backup taken while the app replaces a file under load holds a whole
 * version of it; bytes overwritten in the store fail the restore test, naming the object; the
 * download is the image; a bucket a stopped daemon left frozen is thawed by the next start.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import {
  checkoutFixture,
  createApp,
  deploymentLog,
  newRelease,
  pushAndWait,
  registerSshKey,
  requestThroughRouter,
} from '../support/deploy.js';
import { cliJson, restoreTested } from '../support/addon-cli.js';
import { steadyLoad } from '../support/steady-load.js';
import { waitUntil } from '../support/wait.js';
import type { AddonView } from '../../src/shared/api-types.js';

interface Backup {
  id: string;
  kind: string;
  size_bytes: number;
  verification: 'pending' | 'verified' | 'failed';
  verification_detail: string;
  counts: Record<string, number>;
}

let daemon: TestDaemon;
let app: string;
let files: AddonView;
let firstBackup: string;
const scratch = mkdtempSync(join(tmpdir(), 'slipway-bucket-backups-'));

function call(method: 'GET' | 'POST', path: string, body = ''): Promise<{ status: number; body: string }> {
  return requestThroughRouter(daemon, `${app}.localhost`, { method, path, body, timeoutMs: 60_000 });
}

async function write(path: string, body: string): Promise<void> {
  const reply = await call('POST', `/write?path=${encodeURIComponent(path)}`, body);
  assert.equal(reply.status, 200, reply.body);
}

const read = async (path: string) => call('GET', `/read?path=${encodeURIComponent(path)}`);

async function cliOk(args: string[]): Promise<string> {
  const result = await daemon.cli(args, { timeoutMs: 600_000 });
  assert.equal(result.code, 0, `slipway ${args.join(' ')} failed:\n${result.stderr}`);
  return `${result.stdout}${result.stderr}`;
}

const backups = (bucket: string) => cliJson<Backup[]>(daemon, ['addon', 'backups', bucket]);

/** Takes a backup and waits for its restore test. */
async function backUp(bucket: string): Promise<Backup> {
  const { id } = await cliJson<{ id: string }>(daemon, ['addon', 'backup', bucket]);
  return restoreTested<Backup>(daemon, bucket, id, 180_000);
}

/** A command of the app's release, in its sandbox (it mounts the buckets the app names at its start). */
async function run(command: string): Promise<string> {
  const result = await daemon.cli(['run', '--app', app, '--', 'sh', '-c', command], { timeoutMs: 120_000 });
  assert.equal(result.code, 0, `${command}: ${result.stderr}`);
  return result.stdout;
}

before(async () => {
  daemon = await startDaemon();
  const { gitEnv } = await registerSshKey(daemon);
  const dir = checkoutFixture('bucket-app');
  app = await createApp(daemon, dir, 'bucket-keeper', { ORDERS_FILE: 'uploads/orders.log' });
  files = await cliJson<AddonView>(daemon, ['addon', 'create', 'fs-bucket', 'files', '--plan', '64M']);
  await cliOk(['service', 'link-addon', 'files', '--app', app, '--mount', '/uploads']);
  newRelease(dir, 'k1');
  const deployed = await pushAndWait(daemon, dir, app, gitEnv);
  assert.equal(deployed.state, 'OK', (await deploymentLog(daemon, app, deployed.id)).join('\n'));
});

after(async () => {
  // Never left frozen, whatever failed: the daemon's stop would wait on it.
  if (files) spawnSync('fsfreeze', ['--unfreeze', join(daemon.dataDir, 'fs-buckets', files.id)]);
  await daemon?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

test('a backup of the files an app wrote is restore-tested: the image SHA-256 and e2fsck', async () => {
  await write('uploads/kept.txt', 'as backed up');
  await write('uploads/docs/gone-later.txt', 'deleted after the backup');
  const backup = await backUp('files');
  assert.equal(backup.verification, 'verified', backup.verification_detail);
  assert.match(
    backup.verification_detail,
    /^1 stored object matches its SHA-256; the image unpacked matches the SHA-256 taken at the snapshot; e2fsck -fn finds the filesystem clean, .* used$/,
  );
  assert.equal(backup.counts.image_bytes, 64 * 1024 ** 2);
  assert.ok(backup.size_bytes < 4 * 1024 ** 2, `a sparse, compressed image: ${backup.size_bytes} bytes stored for a 64 MiB bucket`);
  const frozen = /The FS bucket files \(\S+\) was frozen (\d+) ms for its backup/.exec(daemon.output());
  assert.ok(frozen, 'the freeze is measured and logged');
  console.log(`bucket frozen for ${frozen[1]} ms while its image was copied (64 MiB bucket, a few files)`);
  assert.ok(Number(frozen[1]) < 5000, `frozen ${frozen[1]} ms`);
  firstBackup = backup.id;
  const listed = await daemon.cli(['addon', 'backups', 'files']);
  assert.match(listed.stderr, /Restorable to any of these backups that did not fail its restore test/);
});

test('a restore in place brings the files back to the running app, without a failed request', async () => {
  await write('uploads/kept.txt', 'changed after the backup');
  await write('uploads/new-after.txt', 'written after the backup');
  const removed = await run('rm uploads/docs/gone-later.txt && echo removed');
  assert.match(removed, /removed/);
  const load = steadyLoad(daemon, `${app}.localhost`);
  await new Promise((r) => setTimeout(r, 500));
  const restored = await cliJson<{ addon: AddonView; safety_backup: string }>(daemon, [
    'addon',
    'restore',
    'files',
    '--backup',
    firstBackup,
    '--yes',
  ]);
  await new Promise((r) => setTimeout(r, 500));
  const { failures, failureCount } = await load.stop();
  assert.deepEqual(failures, [], `failed requests during the restore: ${failureCount}`);
  assert.match(restored.safety_backup, /^backup_/);
  assert.equal((await read('uploads/kept.txt')).body, 'as backed up');
  assert.equal((await read('uploads/docs/gone-later.txt')).body, 'deleted after the backup');
  assert.equal((await read('uploads/new-after.txt')).status, 500, 'what was written after the backup is gone');
  // The safety backup holds the bucket as it was before the restore.
  const safety = await waitUntil('the safety backup verified', async () => {
    const found = (await backups('files')).find((b) => b.id === restored.safety_backup);
    return found?.verification === 'verified' ? found : undefined;
  });
  assert.equal(safety.kind, 'safety');
});

test('--as makes a new bucket of the backup, at its size, its files in the new group', async () => {
  const made = await cliJson<{ addon: AddonView }>(daemon, ['addon', 'restore', 'files', '--backup', firstBackup, '--as', 'files-copy']);
  assert.equal(made.addon.name, 'files-copy');
  await cliOk(['service', 'link-addon', 'files-copy', '--app', app, '--mount', '/copy']);
  const [group, ...ids] = (await run('stat -c %g copy/kept.txt; id -G')).trim().split(/\s+/);
  assert.equal((await run('cat copy/kept.txt')).trim(), 'as backed up');
  assert.ok(ids.includes(group!), `the file's group ${group} is one the app holds for the new bucket (${ids.join(' ')})`);
  const listed = (await cliJson<AddonView[]>(daemon, ['addon', 'list'])).find((a) => a.name === 'files-copy')!;
  assert.equal(listed.bucket!.size_bytes, 64 * 1024 ** 2, 'the size of the bucket backed up');
  assert.ok(listed.bucket!.used_bytes !== null);
  assert.equal((await read('uploads/kept.txt')).body, 'as backed up', 'the source is untouched');
});

test('a backup taken while the app replaces a file under load is a clean filesystem holding a whole version', async () => {
  const churn = await call('POST', '/churn?path=uploads/whole.bin&seconds=8');
  assert.equal(churn.status, 200, churn.body);
  await new Promise((r) => setTimeout(r, 1500));
  const backup = await backUp('files');
  assert.equal(backup.verification, 'verified', backup.verification_detail);
  assert.match(backup.verification_detail, /e2fsck -fn finds the filesystem clean/);
  await cliOk(['addon', 'restore', 'files', '--backup', backup.id, '--as', 'files-snap']);
  await cliOk(['service', 'link-addon', 'files-snap', '--app', app, '--mount', '/snap']);
  const line = (await run('head -n 1 snap/whole.bin; tail -c +66 snap/whole.bin | sha256sum')).trim().split(/\s+/);
  assert.equal(line[0], line[1], 'the file the app replaced atomically is one whole version');
});

test('the download is the image: it unpacks sparse and e2fsck finds it clean', async () => {
  const archive = join(scratch, 'files.img.tar.gz');
  await cliOk(['addon', 'backup', 'download', 'files', firstBackup, '--output', archive]);
  const unpacked = spawnSync('tar', ['-xSzf', archive, '-C', scratch], { encoding: 'utf8' });
  assert.equal(unpacked.status, 0, unpacked.stderr);
  const image = join(scratch, `${files.id}.img`);
  assert.equal(statSync(image).size, 64 * 1024 ** 2);
  const fsck = spawnSync('e2fsck', ['-fn', image], { encoding: 'utf8' });
  assert.equal(fsck.status, 0, fsck.stdout);
});

test('bytes overwritten in a stored image fail its restore test and every restore, naming the object', async () => {
  const key = `fs-bucket/${files.id}/${firstBackup}.img.tar.gz`;
  const object = join(`${daemon.dataDir}-backups`, key);
  const fd = openSync(object, 'r+');
  writeSync(fd, Buffer.from('overwritten'), 0, 11, Math.floor(statSync(object).size / 2));
  closeSync(fd);
  const changed = new RegExp(`backup object ${key.replaceAll('.', '\\.')} changed since it was stored`);
  const inPlace = await daemon.cli(['addon', 'restore', 'files', '--backup', firstBackup, '--yes']);
  assert.notEqual(inPlace.code, 0);
  assert.match(inPlace.stderr, changed);
  const verify = await daemon.cli(['addon', 'backup', 'verify', 'files', firstBackup], { timeoutMs: 600_000 });
  assert.notEqual(verify.code, 0);
  assert.match(verify.stderr, changed);
  assert.equal((await backups('files'))[0]!.id, firstBackup, 'the failed backup is listed first');
  const refused = await daemon.cli(['addon', 'restore', 'files', '--backup', firstBackup, '--as', 'files-bad']);
  assert.match(refused.stderr, /failed its restore test/);
  assert.equal((await read('uploads/kept.txt')).body, 'as backed up', 'the bucket serves on');
});

test('a bucket a daemon that died mid-backup left frozen is thawed by the next start', async () => {
  const mountPoint = join(daemon.dataDir, 'fs-buckets', files.id);
  // A freeze under way (EBUSY: a backup's own, for milliseconds) is waited out.
  let frozen = spawnSync('fsfreeze', ['--freeze', mountPoint], { encoding: 'utf8' });
  for (let attempt = 1; frozen.status !== 0 && /busy/i.test(frozen.stderr) && attempt <= 10; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    frozen = spawnSync('fsfreeze', ['--freeze', mountPoint], { encoding: 'utf8' });
  }
  assert.equal(frozen.status, 0, frozen.stderr);
  // As a daemon that died in the middle of a backup leaves it.
  await daemon.kill();
  await daemon.restart();
  assert.match(daemon.output(), new RegExp(`The FS bucket ${files.id} was left frozen by a backup .*; it is thawed`));
  await write('uploads/after-thaw.txt', 'writes go on');
  assert.equal((await read('uploads/after-thaw.txt')).body, 'writes go on');
});
