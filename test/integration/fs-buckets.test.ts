import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync } from 'node:fs';
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
import { cliJson } from '../support/addon-cli.js';
import { steadyLoad } from '../support/steady-load.js';
import { mountsUnder } from '../../src/storage/mount-table.js';
import type { AddonView } from '../../src/shared/api-types.js';

// FS buckets on the local backend (issue 34, items 1, 2 and the CLI of 6): one bucket shared by
// two apps of different users, a second small one filled to ENOSPC, a redeploy under load that
// writes into the bucket, what a hostile tenant plants there, the listing, deletion, and the
// mounts across a daemon restart and a stop.
let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let writerDir: string;
let readerDir: string;
let writer: string;
let reader: string;
let files: AddonView;
let small: AddonView;

interface Reply {
  status: number;
  body: string;
}

/** A request through the router to an app, on a fresh connection. */
function call(appId: string, method: 'GET' | 'POST', path: string, body = ''): Promise<Reply> {
  return requestThroughRouter(daemon, `${appId}.localhost`, { method, path, body, timeoutMs: 60_000 });
}

async function json<T>(appId: string, method: 'GET' | 'POST', path: string, body = ''): Promise<T> {
  const reply = await call(appId, method, path, body);
  assert.equal(reply.status, 200, `${method} ${path}: ${reply.body}`);
  return JSON.parse(reply.body) as T;
}

async function cliOk(args: string[]): Promise<string> {
  const result = await daemon.cli(args);
  assert.equal(result.code, 0, `slipway ${args.join(' ')} failed:\n${result.stderr}`);
  return `${result.stdout}${result.stderr}`;
}

const addons = () => cliJson<AddonView[]>(daemon, ['addon', 'list']);
const bucketsRoot = () => join(daemon.dataDir, 'fs-buckets');
const mountedBuckets = () => mountsUnder(readFileSync('/proc/self/mountinfo', 'utf8'), bucketsRoot());

async function deploy(dir: string, appId: string, release: string): Promise<void> {
  newRelease(dir, release);
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
}

before(async () => {
  daemon = await startDaemon();
  ({ gitEnv } = await registerSshKey(daemon));
  writerDir = checkoutFixture('bucket-app');
  readerDir = checkoutFixture('bucket-app');
  writer = await createApp(daemon, writerDir, 'bucket-writer', { ORDERS_FILE: 'uploads/orders.log' });
  // Its pre-run hook writes into the bucket: hooks see it as instances do.
  reader = await createApp(daemon, readerDir, 'bucket-reader', { CC_PRE_RUN_HOOK: 'echo hook-ran > shared/data/hook.txt' });
  files = await cliJson<AddonView>(daemon, ['addon', 'create', 'fs-bucket', 'files', '--plan', '64M', '--link', writer]);
  small = await cliJson<AddonView>(daemon, ['addon', 'create', 'fs-bucket', 'small', '--plan', '16M']);
  // The writer names where it wants the bucket with the reference's variable; the reader with --mount.
  await cliOk(['env', 'set', 'CC_FS_BUCKET', `/uploads:${files.bucket!.host}`, '--app', writer]);
  await cliOk(['service', 'link-addon', 'small', '--app', writer, '--mount', '/small']);
  await cliOk(['service', 'link-addon', 'files', '--app', reader, '--mount', '/shared/data']);
  await deploy(writerDir, writer, 'w1');
  await deploy(readerDir, reader, 'r1');
});

after(async () => {
  await daemon?.stop();
});

test('create: the host value is the add-on variable, bad plans and hostile paths are refused', async () => {
  const env = await cliJson<Array<{ name: string; value: string }>>(daemon, ['addon', 'env', 'files']);
  assert.deepEqual(env, [{ name: 'BUCKET_HOST', value: files.bucket!.host }]);
  assert.match(files.bucket!.host, /^bucket-[0-9a-f-]{36}-fsbucket$/);
  const badPlan = await daemon.cli(['addon', 'create', 'fs-bucket', 'huge', '--plan', '9T']);
  assert.equal(badPlan.code, 1);
  assert.match(badPlan.stderr, /An FS bucket is 16 MiB to 1 TiB; 9T is 9 TiB/);
  const escaping = await daemon.cli(['service', 'link-addon', 'files', '--app', writer, '--mount', '/../../etc']);
  assert.equal(escaping.code, 1);
  assert.match(escaping.stderr, /--mount is not a bucket mount: the path may not hold "\." or "\.\."/);
  const sections = await cliJson<Array<{ source: string; env: Array<{ name: string; value: string }> }>>(daemon, ['env', '--app', reader]);
  assert.deepEqual(
    sections[0]!.env.filter((v) => v.name.startsWith('CC_FS_BUCKET')),
    [{ name: 'CC_FS_BUCKET', value: `/shared/data:${files.bucket!.host}` }],
  );
});

test('two apps of different users share the files read-write; the other bucket is apart', async () => {
  await json(writer, 'POST', '/write?path=uploads/hello.txt', 'hello from the writer');
  assert.equal((await call(reader, 'GET', '/read?path=shared/data/hello.txt')).body, 'hello from the writer');
  await json(reader, 'POST', '/write?path=shared/data/notes/from-reader.txt', 'one');
  await json(writer, 'POST', '/append?path=uploads/notes/from-reader.txt', ' two');
  assert.equal((await call(reader, 'GET', '/read?path=shared/data/notes/from-reader.txt')).body, 'one two');
  const byWriter = await json<{ uid: number; gid: number; mode: string; me: number; groups: number[] }>(
    writer,
    'GET',
    '/stat?path=uploads/hello.txt',
  );
  const byReader = await json<{ uid: number; gid: number; mode: string; me: number }>(reader, 'GET', '/stat?path=shared/data/notes');
  assert.notEqual(byWriter.me, byReader.me, 'the apps run as users of their own');
  assert.equal(byWriter.uid, byWriter.me, 'a file belongs to the app that made it');
  assert.equal(byWriter.mode, '660', "read-write for the bucket's group, nothing for others, whatever the umask");
  assert.equal(byReader.mode, '2770');
  assert.ok(byWriter.groups.includes(byWriter.gid), "the writer's sandbox holds the bucket's group");
  assert.equal((await call(reader, 'GET', '/read?path=shared/data/../../small/x')).status, 500, 'the reader has no /small');
  assert.equal((await call(writer, 'GET', '/read?path=uploads/hook.txt')).body, 'hook-ran\n', "the reader's pre-run hook wrote there");
  // A one-off command of the release sees the bucket too.
  const run = await daemon.cli(['run', '--app', reader, '--', 'cat', 'shared/data/hello.txt']);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /hello from the writer/);
});

test('a redeploy, a scale-up, a restart and a rollback under keep-alive and POST load fail no request and lose no write', {
  timeout: 420_000,
}, async () => {
  const load = steadyLoad(daemon, `${writer}.localhost`);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await deploy(writerDir, writer, 'w2');
  await cliOk(['scale', '--instances', '2', '--app', writer]);
  await cliOk(['restart', '--app', writer]);
  await cliOk(['rollback', '--app', writer]);
  await cliOk(['scale', '--instances', '1', '--app', writer]);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const { failures, failureCount, releases, counts } = await load.stop();
  assert.deepEqual(failures, [], `failed requests: ${failureCount}`);
  assert.ok(releases.has('w1') && releases.has('w2'), `both releases served (${[...releases].join(', ')})`);
  assert.equal((await call(writer, 'GET', '/read?path=uploads/hello.txt')).body, 'hello from the writer');
  // Every POST of the load appended an order to the bucket, from every instance, none lost.
  const orders = (await call(reader, 'GET', '/read?path=shared/data/orders.log')).body.split('\n').filter(Boolean);
  assert.equal(orders.length, counts.post, 'one order per answered POST');
});

test('a write past the size fails with ENOSPC in the app; the other bucket still takes writes', { timeout: 120_000 }, async () => {
  const filled = await json<{ written: number; code: string }>(writer, 'POST', '/fill?path=small');
  assert.equal(filled.code, 'ENOSPC');
  assert.ok(filled.written >= 8 * 1024 * 1024 && filled.written <= 16 * 1024 * 1024, `wrote ${filled.written} bytes`);
  await json(writer, 'POST', '/write?path=uploads/after-full.txt', 'still room here');
  assert.equal((await call(reader, 'GET', '/read?path=shared/data/after-full.txt')).body, 'still room here');
  const listed = (await addons()).find((a) => a.name === 'small')!;
  assert.ok(listed.bucket!.used_bytes! > 12 * 1024 * 1024, `used ${listed.bucket!.used_bytes}`);
  assert.equal(listed.bucket!.size_bytes, 16 * 1024 * 1024);
});

test('hostile: links out of the bucket lead nowhere, device nodes cannot be made, set-uid files are inert', async () => {
  const planted = await json<{ mknodStatus: number; deviceExists: boolean; suidMode: string; dataDir: string }>(
    writer,
    'POST',
    '/hostile?path=uploads',
  );
  assert.equal(planted.dataDir, daemon.dataDir, "the app knows the daemon's data folder (its own path shows it)");
  assert.notEqual(planted.mknodStatus, 0, 'mknod fails in the sandbox');
  assert.equal(planted.deviceExists, false);
  // A set-uid file of the writer, run by the reader: it runs as the reader (nosuid, no_new_privs).
  assert.equal(planted.suidMode, '4755');
  const ran = await json<{ status: number; stdout: string; me: number }>(reader, 'GET', '/run?path=shared/data/suid-id');
  assert.equal(ran.status, 0);
  assert.equal(ran.stdout, String(ran.me));
  const mountLine = (await json<{ line: string | null }>(reader, 'GET', '/mountinfo?path=shared/data')).line;
  assert.ok(mountLine, 'the bucket is a mount in the sandbox');
  assert.match(mountLine, /\bnosuid\b/);
  assert.match(mountLine, /\bnodev\b/);
  // Through the links the apps read their own sandbox's view, never the host's data folder.
  assert.equal((await call(reader, 'GET', `/read?path=shared/data/data-link/slipway.db`)).status, 500);
  assert.equal((await call(reader, 'GET', '/read?path=shared/data/shadow-link')).status, 500);
  // Root's listing measures the filesystem, following nothing: the bucket's use stays its own.
  const listed = (await addons()).find((a) => a.name === 'files')!;
  assert.ok(listed.bucket!.used_bytes! < 8 * 1024 * 1024, `used ${listed.bucket!.used_bytes}`);
  const folder = join(bucketsRoot(), files.id);
  assert.ok(lstatSync(join(folder, 'etc-link')).isSymbolicLink(), 'the link stays a link on the host');
  const hostMount = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .find((l) => l.split(' ')[4] === folder)!;
  assert.match(hostMount, /\bnosuid\b/);
  assert.match(hostMount, /\bnodev\b/);
});

test('the listing shows size used against size, the linked apps and their mount paths', async () => {
  const human = await cliOk(['addon', 'list']);
  const line = human.split('\n').find((l) => l.startsWith('files'))!;
  assert.match(line, /fs-bucket/);
  assert.match(line, /\d+(\.\d+)? [KM]iB \/ 64 MiB/);
  assert.match(line, /bucket-writer \(\/uploads\), bucket-reader \(\/shared\/data\)/);
  const info = await cliOk(['addon', 'info', 'files']);
  assert.match(info, new RegExp(`host: +${files.bucket!.host}`));
  assert.match(info, /size: +\d+(\.\d+)? [KM]iB used of 64 MiB/);
  assert.match(info, /^ {2}bucket-writer at \/uploads$/m);
  assert.match(info, /^ {2}bucket-reader at \/shared\/data$/m);
  const listed = (await addons()).find((a) => a.name === 'files')!;
  assert.deepEqual(
    listed.bucket!.mounts.map((m) => [m.app_id, m.path]),
    [
      [writer, '/uploads'],
      [reader, '/shared/data'],
    ],
  );
});

test('a CC_FS_BUCKET naming a bucket the app is not linked to stops its deploy with the reason', { timeout: 300_000 }, async () => {
  await cliOk(['env', 'set', 'CC_FS_BUCKET_1', `/elsewhere:${small.bucket!.host}`, '--app', reader]);
  newRelease(readerDir, 'r2');
  const result = await pushAndWait(daemon, readerDir, reader, gitEnv);
  assert.equal(result.state, 'FAIL');
  assert.match(
    (await deploymentLog(daemon, reader, result.id)).join('\n'),
    /CC_FS_BUCKET_1 names the bucket host bucket-[0-9a-f-]+-fsbucket, which no FS bucket linked to this application has/,
  );
  assert.equal((await call(reader, 'GET', '/read?path=shared/data/hello.txt')).body, 'hello from the writer', 'r1 serves on');
  await cliOk(['env', 'rm', 'CC_FS_BUCKET_1', '--app', reader]);
});

test('a bucket an app mounts is not unlinked under it; once the variable is gone, deleting unmounts it and removes its filesystem and group', async () => {
  const refused = await daemon.cli(['addon', 'delete', 'small', '--unlink', '--yes']);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /The application bucket-writer mounts the bucket small \(CC_FS_BUCKET_1\)/);
  assert.match(refused.stderr, /slipway env rm CC_FS_BUCKET_1 --app bucket-writer/);
  const unlinkRefused = await daemon.cli(['service', 'unlink-addon', 'small', '--app', writer]);
  assert.equal(unlinkRefused.code, 1);
  await cliOk(['env', 'rm', 'CC_FS_BUCKET_1', '--app', writer]);
  await cliOk(['addon', 'delete', 'small', '--unlink', '--yes']);
  const folder = join(bucketsRoot(), small.id);
  assert.ok(!mountedBuckets().includes(folder), 'unmounted');
  assert.equal(existsSync(`${folder}.img`), false);
  const group = spawnSync('getent', ['group', `slb-${small.id.slice(6, 14)}${small.id.slice(15, 19)}`], { encoding: 'utf8' });
  assert.equal(group.status, 2, `the group is gone: ${group.stdout}`);
});

test('the mounts outlive a daemon restart, and a stop unmounts them; the next start mounts them again', { timeout: 300_000 }, async () => {
  await daemon.terminate();
  assert.ok(mountedBuckets().includes(join(bucketsRoot(), files.id)), 'still mounted while no daemon runs');
  await daemon.restart();
  assert.equal((await call(reader, 'GET', '/read?path=shared/data/hello.txt')).body, 'hello from the writer');
  await daemon.stop();
  assert.deepEqual(mountedBuckets(), [], 'system stop unmounted every bucket');
  await daemon.restart();
  assert.ok(mountedBuckets().includes(join(bucketsRoot(), files.id)), 'mounted again at start');
  await cliOk(['restart', '--app', writer]);
  assert.equal((await call(writer, 'GET', '/read?path=uploads/hello.txt')).body, 'hello from the writer');
});
