/**
 * The whole platform onto a new machine, through the CLI: an app with a variable and a custom
 * domain, pushed twice, with a linked PostgreSQL add-on holding rows; `system backup --to`; the
 * first platform stopped for good; `slipway server --restore-from` on a new empty data folder.
 * The old token logs in, the org, app, variable and domain are there, the app serves again from
 * its kept release (no rebuild), `slipway rollback` goes back to the first push's release without
 * a build, and the rows are back. A non-administrator cannot take a backup, and a restore onto a
 * folder that is not empty is refused without touching it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp, getThroughRouter, newRelease, pushAndWait, registerSshKey } from '../support/deploy.js';
import { SLIPWAY_BIN } from '../support/cli.js';
import { waitUntil } from '../support/wait.js';
import { respExchange, type RespReply } from '../../src/addons/redis/resp.js';

let first: TestDaemon;
let second: TestDaemon | undefined;
let firstStopped = false;
let earlierBackup: string;
let platformDbBackup: string;
let appId: string;
let commit: string;
let firstCommit: string;
let backupPath: string;
const scratch = mkdtempSync(join(tmpdir(), 'slipway-platform-backup-'));
const backupFolder = join(scratch, 'platform-backups');

async function cliOk(daemon: TestDaemon, args: string[], options: { cwd?: string; token?: string } = {}): Promise<string> {
  const result = await daemon.cli(args, { ...options, timeoutMs: 600_000 });
  assert.equal(result.code, 0, `slipway ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

async function uriOf(daemon: TestDaemon, addon: string): Promise<string> {
  const env = JSON.parse(await cliOk(daemon, ['addon', 'env', addon, '--format', 'json'])) as Array<{ name: string; value: string }>;
  return env.find((v) => v.name === 'POSTGRESQL_ADDON_URI')!.value;
}

/** Commands on one connection with the credentials a linked app receives. */
async function redis(daemon: TestDaemon, ...commands: string[][]): Promise<RespReply[]> {
  const list = JSON.parse(await cliOk(daemon, ['addon', 'env', 'cache', '--format', 'json'])) as Array<{ name: string; value: string }>;
  const env = Object.fromEntries(list.map((v) => [v.name, v.value]));
  const replies = await respExchange(env.REDIS_HOST!, Number(env.REDIS_PORT), [['AUTH', env.REDIS_PASSWORD!], ...commands], 5000);
  assert.equal(replies[0], 'OK');
  return replies.slice(1);
}

async function sql<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

before(async () => {
  first = await startDaemon();
  const { gitEnv } = await registerSshKey(first);
  const dir = checkoutExample('node-hello');
  appId = await createApp(first, dir, 'shop', { GREETING: 'hello from the first machine' });
  await cliOk(first, ['domain', 'add', 'shop.example.com'], { cwd: dir });
  await cliOk(first, ['addon', 'create', 'postgresql', 'db', '--link', appId]);
  await cliOk(first, ['addon', 'create', 'redis', 'cache', '--link', appId]);
  // An FS bucket the app mounts at uploads/: its image comes back with the platform.
  await cliOk(first, ['addon', 'create', 'fs-bucket', 'files', '--plan', '16M']);
  await cliOk(first, ['service', 'link-addon', 'files', '--app', appId, '--mount', '/uploads']);
  const firstPush = await pushAndWait(first, dir, appId, gitEnv);
  assert.equal(firstPush.state, 'OK', firstPush.push);
  firstCommit = firstPush.commit;
  // A second release: the first one stays kept, for a rollback.
  newRelease(dir, 'second');
  const pushed = await pushAndWait(first, dir, appId, gitEnv);
  assert.equal(pushed.state, 'OK', pushed.push);
  commit = pushed.commit;
  const uri = await uriOf(first, 'db');
  await sql(uri, 'CREATE TABLE notes (id serial PRIMARY KEY, v text NOT NULL)');
  await sql(uri, `INSERT INTO notes (v) VALUES ('one'), ('two'), ('three')`);
  await redis(first, ['SET', 'greeting', 'kept across machines'], ['SET', 'counter', '42']);
  await cliOk(first, ['run', '--app', appId, '--', 'sh', '-c', 'echo kept in the bucket > uploads/note.txt']);
  // An add-on backup of an earlier moment: it stays behind in the first machine's backup store.
  earlierBackup = (await cliOk(first, ['addon', 'backup', 'db'])).trim();
});

after(async () => {
  if (second) await second.stop();
  if (first && !firstStopped) await first.stop();
  for (const daemon of [second, first]) if (daemon) rmSync(`${daemon.dataDir}-backups`, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

test('a non-administrator cannot take a platform backup', async () => {
  const user = JSON.parse(await cliOk(first, ['user', 'create', 'mallory', '--format', 'json'])) as { token: string };
  const refused = await first.cli(['system', 'backup', '--to', backupFolder], { token: user.token });
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /Only an administrator can do this/);
  assert.throws(() => readdirSync(backupFolder), /ENOENT/, 'nothing was written');
});

test('system backup writes a complete backup with its manifest, under its final name only once whole', async () => {
  const report = JSON.parse(await cliOk(first, ['system', 'backup', '--to', backupFolder, '--format', 'json'])) as {
    path: string;
    repositories: number;
    addons: Array<{ name: string; provider: string; backup_id: string }>;
    files: number;
    releases: number;
  };
  assert.match(report.path, /\/slipway-platform-\d{8}T\d{6}Z$/);
  backupPath = report.path;
  platformDbBackup = report.addons.find((a) => a.name === 'db')!.backup_id;
  assert.notEqual(platformDbBackup, earlierBackup, 'a fresh add-on backup is taken');
  assert.deepEqual(readdirSync(backupFolder).sort(), ['releases', report.path.split('/').pop()], 'no temporary folder is left');
  assert.equal(report.repositories, 1);
  assert.deepEqual(report.addons.map((a) => [a.name, a.provider]).sort(), [
    ['cache', 'redis'],
    ['db', 'postgresql'],
    ['files', 'fs-bucket'],
  ]);
  const manifest = JSON.parse(readFileSync(join(report.path, 'manifest.json'), 'utf8')) as {
    files: Array<{ path: string; sha256: string }>;
    addons: Array<{ addon_id: string; name: string }>;
  };
  const paths = manifest.files.map((f) => f.path);
  const dbId = manifest.addons.find((a) => a.name === 'db')!.addon_id;
  for (const path of [
    'slipway.db',
    `repos/${appId}.bundle`,
    'ssh_host_ed25519_key',
    'ca/ca.pem',
    'ca/ca.key',
    `postgresql-servers/${dbId}.admin-password`,
    'secrets-key',
  ]) {
    assert.ok(paths.includes(path), `${path} is in the manifest: ${paths.join(', ')}`);
  }
  assert.ok(
    paths.some((p) => p.startsWith(`addons/postgresql/${dbId}/base/`)),
    "the base backup of the add-on's server is in",
  );
  assert.ok(
    paths.some((p) => p.startsWith(`addons/postgresql/${dbId}/wal/`)),
    'its archived WAL is in',
  );
  assert.equal(report.files, manifest.files.length);
  // Both kept releases, as archives beside the backups (a next backup here names them again).
  assert.equal(report.releases, 2);
  const { releases } = manifest as unknown as { releases: Array<{ app_id: string; object: string; size_bytes: number }> };
  assert.deepEqual(
    releases.map((r) => r.app_id),
    [appId, appId],
  );
  for (const r of releases) assert.equal(statSync(join(backupFolder, r.object)).size, r.size_bytes, r.object);
  // No --backup-key-file: written in clear, and said so.
  assert.match(first.output(), /platform backup written in clear: it holds the CA keys, the admin token and the key to the secrets/);
});

test('a restore onto a data folder that is not empty, or from a damaged backup, is refused without touching anything', async () => {
  await first.stop();
  firstStopped = true;
  const before = readdirSync(first.dataDir).sort();
  const storeTime = statSync(join(first.dataDir, 'slipway.db')).mtimeMs;
  const refused = spawnSync(process.execPath, [SLIPWAY_BIN, 'server', '--data-dir', first.dataDir, '--restore-from', backupFolder], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.notEqual(refused.status, 0);
  assert.match(refused.stderr, /--restore-from needs an empty data folder, and .* holds \d+ entries; nothing was changed/);
  assert.deepEqual(readdirSync(first.dataDir).sort(), before);
  assert.equal(statSync(join(first.dataDir, 'slipway.db')).mtimeMs, storeTime);

  // A damaged backup is refused before anything is written to the (empty) data folder.
  const damaged = join(scratch, 'damaged');
  cpSync(backupPath, damaged, { recursive: true });
  truncateSync(join(damaged, 'slipway.db'), 4096);
  const target = join(scratch, 'new-data');
  const refusedDamaged = spawnSync(process.execPath, [SLIPWAY_BIN, 'server', '--data-dir', target, '--restore-from', damaged], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.notEqual(refusedDamaged.status, 0);
  assert.match(
    refusedDamaged.stderr,
    /slipway\.db in the backup does not match its checksum in the manifest: the backup is damaged\. Nothing was written/,
  );
  assert.equal(existsSync(target), false);
});

test('server --restore-from brings the platform back on a new data folder: token, app, variable, domain, serving app, rollback, rows', async () => {
  second = await startDaemon(['--restore-from', backupFolder], { emptyDataFolder: true });
  const restored = second;
  assert.equal(restored.adminToken, first.adminToken, 'the admin token file came back');
  for (const file of ['ca/ca.pem', 'ca/ca.key', 'ssh_host_ed25519_key']) {
    assert.equal(
      readFileSync(join(restored.dataDir, file), 'utf8'),
      readFileSync(join(first.dataDir, file), 'utf8'),
      `${file} is the same`,
    );
  }
  const whoami = JSON.parse(await cliOk(restored, ['whoami', '--format', 'json'])) as { user: { name: string } };
  assert.equal(whoami.user.name, 'admin');
  assert.match(await cliOk(restored, ['org', 'list']), /default/);
  const apps = JSON.parse(await cliOk(restored, ['applications', '--format', 'json'])) as Array<{ id: string; name: string }>;
  assert.deepEqual(
    apps.map((a) => [a.id, a.name]),
    [[appId, 'shop']],
  );
  const env = await cliOk(restored, ['env', '--app', appId]);
  assert.match(env, /GREETING=.*hello from the first machine/);
  const domains = JSON.parse(await cliOk(restored, ['domain', '--app', appId, '--format', 'json'])) as { domains: Array<{ fqdn: string }> };
  assert.deepEqual(
    domains.domains.map((d) => d.fqdn),
    ['shop.example.com'],
  );
  const served = await waitUntil(
    'the restored app to serve its commit again',
    async () => {
      const response = await getThroughRouter(restored, 'shop.example.com').catch(() => undefined);
      return response?.status === 200 ? response : undefined;
    },
    300_000,
  );
  const facts = JSON.parse(served.body) as { greeting: string; commitId: string };
  assert.equal(facts.greeting, 'hello from the first machine');
  assert.equal(facts.commitId, commit);
  // Started from its kept release: nothing was built again.
  assert.match(restored.output(), /Restore: 2 of 2 kept release\(s\) unpacked/);
  assert.doesNotMatch(restored.output(), /is built again from commit/);
  // The first push's release came back too: a rollback serves it, without a build.
  const rolledBack = await restored.cli(['rollback', '--app', appId], { timeoutMs: 300_000 });
  assert.equal(rolledBack.code, 0, rolledBack.stderr);
  const previous = JSON.parse((await getThroughRouter(restored, 'shop.example.com')).body) as { commitId: string; release: string };
  assert.deepEqual([previous.commitId, previous.release], [firstCommit, 'none']);
  const rows = await sql<{ v: string }>(await uriOf(restored, 'db'), 'SELECT v FROM notes ORDER BY id');
  assert.deepEqual(
    rows.map((r) => r.v),
    ['one', 'two', 'three'],
  );
  // The add-on backup the platform backup carried is listed, verified, and restores here; the
  // earlier one, whose base backup stayed on the first machine, is not listed.
  const listed = JSON.parse(await cliOk(restored, ['addon', 'backups', 'db', '--format', 'json'])) as Array<{
    id: string;
    verification: string;
  }>;
  assert.deepEqual(
    listed.map((b) => [b.id, b.verification]),
    [[platformDbBackup, 'verified']],
  );
  await cliOk(restored, ['addon', 'backup', 'verify', 'db', platformDbBackup]);
  // The Redis add-on loads its snapshot through the add-on restore once its server runs.
  const keys = await waitUntil(
    'the Redis add-on to hold its keys again',
    async () => {
      const got = await redis(restored, ['GET', 'greeting'], ['GET', 'counter']).catch(() => undefined);
      return got?.[0] === 'kept across machines' ? got : undefined;
    },
    120_000,
  );
  assert.deepEqual(keys, ['kept across machines', '42']);
  // The FS bucket's image came back and is mounted: the app's release sees the file written there.
  assert.match(restored.output(), /Restored the images of 1 FS bucket\(s\)/);
  assert.equal((await cliOk(restored, ['run', '--app', appId, '--', 'cat', 'uploads/note.txt'])).trim(), 'kept in the bucket');
});

test('--platform-backup-to: a daemon past the day’s time takes that day’s backup at its start, keeping the number asked', async () => {
  const daily = join(scratch, 'daily');
  // A backup of an earlier day in the folder: the one beyond --platform-backup-keep 1.
  const earlier = 'slipway-platform-20200101T023000Z';
  cpSync(backupPath, join(daily, earlier), { recursive: true });
  await second!.terminate();
  await second!.restart({ extraArgs: ['--platform-backup-to', daily, '--platform-backup-at', '00:00', '--platform-backup-keep', '1'] });
  const [made] = await waitUntil(
    'the scheduled platform backup',
    async () => {
      const names = readdirSync(daily).filter((n) => n.startsWith('slipway-platform-'));
      return names.length === 1 && names[0] !== earlier ? names : undefined;
    },
    120_000,
  );
  assert.match(made!, /^slipway-platform-\d{8}T\d{6}Z$/);
  const manifest = JSON.parse(readFileSync(join(daily, made!, 'manifest.json'), 'utf8')) as { addons: Array<{ name: string }> };
  assert.deepEqual(manifest.addons.map((a) => a.name).sort(), ['cache', 'db', 'files']);
  // The earlier one goes before the daemon says so: its line may come a moment after the folder.
  await waitUntil('the scheduled backup told', async () =>
    /Scheduled platform backup written to .*; removed slipway-platform-/.test(second!.output()) ? true : undefined,
  );
});
