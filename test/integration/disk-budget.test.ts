/**
 * Disk budgets (docs/disk-budgets.md): each app's repository, builds, caches and releases live
 * in a filesystem of its own, so the kernel refuses what goes past the budget. Driven as a user:
 * a daemon with a small default budget, a push too large for it, a build writing too much.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { waitUntil } from '../support/wait.js';
import { freePort } from '../support/free-port.js';
import {
  checkoutExample,
  commitAll,
  createApp,
  deploymentLog,
  getThroughRouter,
  gitPush,
  newRelease,
  pushAndWait,
  registerSshKey,
} from '../support/deploy.js';

const MiB = 1024 * 1024;
let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let dir: string;
let appId: string;

interface AppDisk {
  app_id: string;
  used_bytes: number | null;
  budget_bytes: number;
}

async function diskOf(): Promise<AppDisk> {
  const status = await daemon.cli(['system', 'status', '--format', 'json']);
  assert.equal(status.code, 0, status.stderr);
  const found = (JSON.parse(status.stdout) as { apps: AppDisk[] }).apps.find((a) => a.app_id === appId);
  assert.ok(found, status.stdout);
  return found;
}

async function served(): Promise<string> {
  const response = await getThroughRouter(daemon, `${appId}.localhost`);
  assert.equal(response.status, 200);
  return String((JSON.parse(response.body) as { release: string }).release);
}

before(async () => {
  // A PostgreSQL plan of 16 MiB of data, checked every second (docs/disk-budgets.md, Add-ons).
  process.env.SLIPWAY_ADDON_PLAN_LIMITS = JSON.stringify({ postgresql: { databaseSizeBytes: 16 * MiB } });
  process.env.SLIPWAY_ADDON_SIZE_CHECK_SECONDS = '1';
  process.env.SLIPWAY_POSTGRES_PORT = String(await freePort());
  daemon = await startDaemon(['--app-disk-budget', '64M']);
  ({ gitEnv } = await registerSshKey(daemon));
  dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'budgeted');
  newRelease(dir, 'small');
  const first = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(first.state, 'OK', (await deploymentLog(daemon, appId, first.id)).join('\n'));
});

after(async () => {
  await daemon?.stop();
});

test("the app's folder is a filesystem of its own, its use shown by system status and /metrics", async () => {
  const folder = join(daemon.dataDir, 'apps', appId);
  const mounted = execFileSync('findmnt', ['-n', '-o', 'FSTYPE,SIZE', folder], { encoding: 'utf8' });
  // ext4's own metadata and journal take a few MiB of the image.
  assert.match(mounted, /^ext4\s+[56]\d(\.\d)?M$/m, 'an ext4 filesystem of about the budget');
  assert.ok(existsSync(join(folder, 'repo.git', 'HEAD')) && existsSync(join(folder, 'releases')), 'repository and releases inside it');

  const disk = await diskOf();
  assert.equal(disk.budget_bytes, 64 * MiB);
  assert.ok(disk.used_bytes !== null && disk.used_bytes > 0 && disk.used_bytes < 32 * MiB, JSON.stringify(disk));
  const table = await daemon.cli(['system', 'status']);
  assert.match(table.stdout, new RegExp(`budgeted\\s+${appId}\\s+[\\d.]+ [KM]iB\\s+64 MiB\\s+\\d+%`), table.stdout);

  const metrics = await fetch(`${daemon.apiUrl}/metrics`, { headers: { authorization: `Bearer ${daemon.adminToken}` } });
  const text = await metrics.text();
  assert.match(text, new RegExp(`^slipway_app_disk_budget_bytes\\{app="${appId}"\\} ${64 * MiB}$`, 'm'));
  assert.match(text, new RegExp(`^slipway_app_disk_used_bytes\\{app="${appId}"\\} [1-9]\\d*$`, 'm'));
});

test('a push larger than what is left is refused while it arrives, with the budget, and nothing of it stays', async () => {
  const before = await diskOf();
  // Random bytes: git cannot compress them below the budget.
  writeFileSync(join(dir, 'huge.bin'), execFileSync('head', ['-c', String(80 * MiB), '/dev/urandom'], { maxBuffer: 100 * MiB }));
  commitAll(dir, 'a file larger than the budget');
  const push = await gitPush(dir, `git+ssh://git@127.0.0.1:${daemon.sshPort}/${appId}.git`, gitEnv);
  assert.notEqual(push.code, 0, push.output);
  assert.match(
    push.output,
    /push refused: it is larger than the [\d.]+ MiB left in this app's disk budget of 64 MiB \([\d.]+ [KM]iB used\)/,
  );
  assert.match(push.output, /slipway scale --disk/);
  const after = await diskOf();
  assert.ok(
    Math.abs(after.used_bytes! - before.used_bytes!) < MiB,
    `nothing of the push is kept: ${before.used_bytes} -> ${after.used_bytes}`,
  );
  const objects = join(daemon.dataDir, 'apps', appId, 'repo.git', 'objects');
  assert.deepEqual(
    readdirSync(objects).filter((name) => name.startsWith('incoming-') || name.startsWith('tmp')),
    [],
    'no quarantine or temporary pack left',
  );
  execFileSync('git', ['reset', '-q', '--hard', 'HEAD~1'], { cwd: dir });
});

test('a build that writes past the budget fails naming it and what to do; the serving release goes on', async () => {
  const before = await diskOf();
  await daemon.cli(['env', 'set', 'CC_PRE_BUILD_HOOK', `head -c ${100 * MiB} /dev/zero > filler.bin`, '--app', appId]);
  newRelease(dir, 'too-big');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  const log = (await deploymentLog(daemon, appId, result.id)).join('\n');
  assert.equal(result.state, 'FAIL', log);
  assert.match(log, /disk budget of 64 MiB exceeded/);
  assert.match(log, /slipway scale --disk <size>/);
  assert.match(log, /The previous release keeps serving/);
  assert.equal(await served(), 'small');
  assert.equal(existsSync(join(daemon.dataDir, 'apps', appId, 'build')), false, 'the failed build folder is removed');
  const after = await diskOf();
  assert.ok(after.used_bytes! < before.used_bytes! + 4 * MiB, `nothing of the build is kept: ${before.used_bytes} -> ${after.used_bytes}`);
  await daemon.cli(['env', 'rm', 'CC_PRE_BUILD_HOOK', '--app', appId]);
});

test('a small commit that unpacks to more than the budget (a zip bomb) fails at its export, naming the budget', async () => {
  // 100 MiB of one letter: a pack of a few hundred KiB, far more once checked out (not zeros:
  // git writes runs of zeros as holes, which take no space).
  writeFileSync(join(dir, 'letters.txt'), Buffer.alloc(100 * MiB, 'a'));
  commitAll(dir, 'a file that compresses to nothing');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  const log = (await deploymentLog(daemon, appId, result.id)).join('\n');
  assert.equal(result.state, 'FAIL', log);
  assert.match(log, /==> \[receive\] .*disk budget of 64 MiB exceeded/);
  assert.equal(await served(), 'small', 'the serving release goes on');
  assert.equal(existsSync(join(daemon.dataDir, 'apps', appId, 'build')), false, 'nothing of the export stays');
  execFileSync('git', ['reset', '-q', '--hard', 'HEAD~1'], { cwd: dir });
});

test('an administrator raises one app’s budget; shrinking it is refused with the reason', async () => {
  const grown = await daemon.cli(['scale', '--disk', '128M', '--app', appId]);
  assert.equal(grown.code, 0, grown.stderr);
  assert.match(grown.stdout, /^disk\s+128 MiB$/m);
  assert.equal((await diskOf()).budget_bytes, 128 * MiB);
  const shrunk = await daemon.cli(['scale', '--disk', '64M', '--app', appId]);
  assert.notEqual(shrunk.code, 0);
  assert.match(shrunk.stderr, /cannot shrink below 128 MiB/);
  // Grown at once where the daemon may resize a mounted filesystem; else at its next mount,
  // which a system stop and a start give (the stop unmounts it, the start grows and mounts it).
  if (/next mount/.test(grown.stderr)) {
    assert.equal(await daemon.stop(), 0);
    await daemon.restart();
    await waitUntil(
      'the app to serve again',
      async () => ((await getThroughRouter(daemon, `${appId}.localhost`)).status === 200 ? true : undefined),
      60_000,
    );
    assert.match(daemon.output(), /grew to its disk budget of 128 MiB/);
  }
  const size = execFileSync('findmnt', ['-n', '-o', 'SIZE', join(daemon.dataDir, 'apps', appId)], { encoding: 'utf8' }).trim();
  assert.match(
    size,
    /^1[12]\d(\.\d)?M$/,
    `the mounted filesystem grew (${size}); scale said: ${grown.stdout}${grown.stderr}; the daemon: ${daemon.output().split('\n').slice(-8).join(' | ')}`,
  );
  assert.equal(await served(), 'small', 'the serving release is the same');
});

test("a PostgreSQL add-on over its plan's size becomes read-only, its sessions ended, and writable again once below", async () => {
  const created = await daemon.cli(['addon', 'create', 'postgresql', 'sized', '--format', 'json']);
  assert.equal(created.code, 0, created.stderr);
  const env = Object.fromEntries(
    (JSON.parse((await daemon.cli(['addon', 'env', 'sized', '--format', 'json'])).stdout) as Array<{ name: string; value: string }>).map(
      (v) => [v.name, v.value],
    ),
  );
  const connect = async () => {
    const client = new pg.Client({ connectionString: env.POSTGRESQL_ADDON_URI, connectionTimeoutMillis: 5000 });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  };
  const readOnly = async () => {
    const client = await connect();
    try {
      return (await client.query<{ default_transaction_read_only: string }>('SHOW default_transaction_read_only')).rows[0]!
        .default_transaction_read_only;
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const writer = await connect();
  // 12 MiB of incompressible rows above an empty database's 8 MiB: past the plan's 16 MiB.
  await writer.query('CREATE TABLE filler (x text)');
  await writer.query('ALTER TABLE filler ALTER COLUMN x SET STORAGE EXTERNAL');
  // A check during the insert may already end this session (57P01): that is the limit at work.
  await writer
    .query(
      "INSERT INTO filler SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 3000) g, generate_series(1, 128) c GROUP BY g",
    )
    .catch((error: { code?: string }) => {
      if (error.code !== '57P01') throw error;
    });
  await waitUntil('the database to be read-only', async () => ((await readOnly()) === 'on' ? true : undefined), 20_000);
  await assert.rejects(writer.query('SELECT 1'), 'the open session was ended');
  const late = await connect();
  try {
    await assert.rejects(late.query("INSERT INTO filler VALUES ('more')"), /read-only transaction/);
    assert.match(daemon.output(), /The PostgreSQL add-on sized holds \d+ MiB, more than its plan's 16 MiB: it is read-only/);
    // Room is made the way the message says (here at once: a dropped table frees its files).
    await late.query('SET default_transaction_read_only = off');
    await late.query('DROP TABLE filler');
  } finally {
    await late.end().catch(() => undefined);
  }
  await waitUntil('the database to take writes again', async () => ((await readOnly()) === 'off' ? true : undefined), 20_000);
  const again = await connect();
  try {
    await again.query('CREATE TABLE small (x int)');
  } finally {
    await again.end().catch(() => undefined);
  }
  await daemon.cli(['addon', 'delete', 'sized', '--yes']);
});
