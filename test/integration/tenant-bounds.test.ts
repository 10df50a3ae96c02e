/**
 * Every shared resource has a bound per tenant (docs/security.md), through the CLI and HTTP of
 * one real daemon: a user owns at most --orgs-per-user organisations; webhooks, drains, cron
 * jobs, manual backups and add-ons restored with --as are refused past their quotas, naming the
 * quota, the use and the command that raises it; a webhook receiver that accepts and never
 * answers (a tarpit on loopback) delays only its own organisation's deliveries; a backup
 * download nobody reads is ended after --download-idle-timeout and frees its job.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, get, type IncomingMessage, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { respExchange } from '../../src/addons/redis/resp.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { commitAll, gitPush, registerSshKey } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';

const IDLE_SECONDS = 3;
let daemon: TestDaemon;
let alice: string;
let gitEnv: NodeJS.ProcessEnv;
/** Accepts every connection and never answers: a tenant's slow receiver. */
let tarpit: TcpServer;
const tarpitSockets: Socket[] = [];
/** Answers 200 at once, noting when each request came. */
let receiver: Server;
const received: Array<{ path: string; at: number }> = [];
const apps: Record<string, { id: string; dir: string }> = {};

before(async () => {
  tarpit = createTcpServer((socket) => {
    socket.on('error', () => undefined);
    tarpitSockets.push(socket);
  });
  await new Promise<void>((resolve) => tarpit.listen(0, '127.0.0.1', resolve));
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push({ path: req.url ?? '', at: Date.now() });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  daemon = await startDaemon([
    '--orgs-per-user',
    '2',
    '--default-quota',
    'webhooks=4,drains=1,backups=1,addons=1,cron-jobs=1',
    '--download-idle-timeout',
    String(IDLE_SECONDS),
    // The receivers of this test live on loopback.
    '--egress-allow',
    '127.0.0.1/32',
  ]);
  const created = await daemon.cli(['user', 'create', 'alice', '--format', 'json']);
  assert.equal(created.code, 0, created.stderr);
  alice = (JSON.parse(created.stdout) as { token: string }).token;
  for (const org of ['acme', 'beta']) await ok(['org', 'create', org]);
  ({ gitEnv } = await registerSshKey(daemon, alice));
  // No package.json: each deployment fails at once, after its deployment.started event.
  for (const [name, org] of [
    ['slow', 'acme'],
    ['quick', 'beta'],
  ] as const) {
    const dir = mkdtempSync(join(tmpdir(), `slipway-bounds-${name}-`));
    writeFileSync(join(dir, 'README'), 'not an app\n');
    execFileSync('git', ['init', '-q', '-b', 'master'], { cwd: dir });
    commitAll(dir, 'first');
    const id = (await ok(['create', '--type', 'node', name, '--region', 'par', '--org', org], dir)).stdout.trim();
    apps[name] = { id, dir };
  }
});

after(async () => {
  await daemon?.stop();
  for (const socket of tarpitSockets) socket.destroy();
  tarpit?.close();
  receiver?.close();
});

/** As alice, or as the administrator (`admin`). */
async function as(args: string[], cwd?: string, who: 'alice' | 'admin' = 'alice') {
  return daemon.cli(args, { timeoutMs: 300_000, ...(cwd ? { cwd } : {}), ...(who === 'alice' ? { token: alice } : {}) });
}

async function ok(args: string[], cwd?: string) {
  const result = await as(args, cwd);
  assert.equal(result.code, 0, `slipway ${args.join(' ')}: ${result.stderr}`);
  return result;
}

async function refused(args: string[], message: RegExp, hint: RegExp, cwd?: string) {
  const result = await as(args, cwd);
  assert.notEqual(result.code, 0, `slipway ${args.join(' ')} should be refused: ${result.stdout}`);
  assert.match(result.stderr, message);
  assert.match(result.stderr, hint);
}

const push = async (name: string) => {
  const app = apps[name]!;
  const result = await gitPush(app.dir, `git+ssh://git@127.0.0.1:${daemon.sshPort}/${app.id}.git`, gitEnv);
  assert.equal(result.code, 0, result.output);
  return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: app.dir, encoding: 'utf8' }).trim();
};

test('a user owns at most --orgs-per-user organisations; an administrator is not bound', async () => {
  await refused(
    ['org', 'create', 'gamma'],
    /user alice owns 2 of 2 organisations \(quota orgs-per-user\)/,
    /slipway server --orgs-per-user N/,
  );
  const orgs = JSON.parse((await ok(['org', 'list', '--format', 'json'])).stdout) as Array<{ name: string }>;
  assert.deepEqual(orgs.map((o) => o.name).sort(), ['acme', 'beta']);
  assert.equal((await as(['org', 'create', 'platform-ops'], undefined, 'admin')).code, 0);
});

test('webhooks and drains past their quotas are refused with the quota, the use and the command raising it', async () => {
  const { dir } = apps.slow!;
  const tarpitUrl = `http://127.0.0.1:${(tarpit.address() as AddressInfo).port}`;
  for (let i = 1; i <= 4; i++) await ok(['webhooks', 'add', `hook-${i}`, `${tarpitUrl}/${i}`, '--event', 'deployment.started'], dir);
  await refused(
    ['webhooks', 'add', 'hook-5', `${tarpitUrl}/5`],
    /organisation acme has 4 of 4 webhooks \(quota webhooks\)/,
    /slipway org quota set acme --webhooks N/,
    dir,
  );
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  await ok(['drain', 'create', 'HTTP', `${receiverUrl}/drain`], dir);
  await refused(
    ['drain', 'create', 'HTTP', `${receiverUrl}/drain-2`],
    /organisation acme has 1 of 1 drains \(quota drains\)/,
    /slipway org quota set acme --drains N/,
    dir,
  );
  await ok(['webhooks', 'add', 'ci', `${receiverUrl}/quick`, '--event', 'deployment.started'], apps.quick!.dir);
});

test("a receiver that never answers delays only its own organisation's deliveries", async () => {
  // acme's deployment makes four deliveries to the tarpit, each held until the sender's timeout.
  await push('slow');
  await waitUntil('the tarpit holds acme deliveries', async () => (tarpitSockets.length >= 2 ? true : undefined), 30_000);
  const pushed = Date.now();
  await push('quick');
  const delivered = await waitUntil("beta's delivery", async () => received.find((r) => r.path === '/quick' && r.at >= pushed), 30_000);
  const open = tarpitSockets.filter((s) => !s.destroyed).length;
  assert.ok(delivered.at - pushed < 5_000, `beta's webhook arrived ${delivered.at - pushed} ms after its push`);
  assert.ok(open >= 1 && open <= 2, `acme holds its own two slots only (${open} connections to the tarpit open)`);
});

test("a release whose cron jobs go past the organisation's quota fails its build before anything runs", async () => {
  const { id, dir } = apps.quick!;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'quick', version: '1.0.0', scripts: { start: 'node -e 0' } }));
  mkdirSync(join(dir, 'clevercloud'), { recursive: true });
  writeFileSync(join(dir, 'clevercloud', 'cron.json'), JSON.stringify(['*/5 * * * * $ROOT/a.sh', '0 3 * * * $ROOT/b.sh']));
  const commit = commitAll(dir, 'two cron jobs');
  await push('quick');
  // As alice: the administrator is no member of beta.
  const deployment = await waitUntil(
    'the deployment to end',
    async () => {
      const list = JSON.parse((await ok(['activity', '--app', id, '--format', 'json', '--limit', '5'])).stdout) as Array<{
        id: string;
        commit: string;
        state: string;
      }>;
      return list.find((d) => d.commit === commit && d.state !== 'WIP');
    },
    120_000,
  );
  assert.equal(deployment.state, 'FAIL');
  // `logs` of a failed deployment exits non-zero, saying why on standard error.
  const logs = await as(['logs', '--app', id, '--deployment-id', deployment.id]);
  const log = `${logs.stdout}${logs.stderr}`;
  assert.match(log, /organisation beta has 0 of 1 cron jobs; this would make 2 \(quota cron-jobs\)/);
  assert.match(log, /slipway org quota set beta --cron-jobs N/);
  assert.doesNotMatch(log, /Build plan/, 'refused before the plan and its tools');
});

test('manual backups and add-ons restored with --as count against their quotas; a download nobody reads is ended', async () => {
  await ok(['addon', 'create', 'redis', 'cache', '--org', 'acme']);
  // About 24 MiB that does not compress: more than the sockets between daemon and client hold.
  const env = Object.fromEntries(
    (JSON.parse((await ok(['addon', 'env', 'cache', '--format', 'json'])).stdout) as Array<{ name: string; value: string }>).map((v) => [
      v.name,
      v.value,
    ]),
  );
  for (let i = 0; i < 24; i++) {
    const replies = await respExchange(
      env.REDIS_HOST!,
      Number(env.REDIS_PORT),
      [
        ['AUTH', env.REDIS_PASSWORD!],
        ['SET', `blob-${i}`, randomBytes(768 * 1024).toString('base64')],
      ],
      10_000,
    );
    assert.deepEqual(replies, ['OK', 'OK']);
  }
  const backup = JSON.parse((await ok(['addon', 'backup', 'cache', '--format', 'json'])).stdout) as { id: string; size_bytes: number };
  const backupSize = backup.size_bytes;
  assert.ok(backupSize > 16 * 1024 * 1024, `the snapshot holds ${backupSize} bytes`);
  await refused(
    ['addon', 'backup', 'cache'],
    /organisation acme has 1 of 1 manual backups \(quota backups\)/,
    /slipway org quota set acme --backups N/,
  );
  await refused(
    ['addon', 'restore', 'cache', '--backup', backup.id, '--as', 'copy', '--yes'],
    /organisation acme has 1 of 1 add-ons \(quota addons\)/,
    /slipway org quota set acme --addons N/,
  );
  const addons = JSON.parse((await ok(['addon', 'list', '--org', 'acme', '--format', 'json'])).stdout) as Array<{ name: string }>;
  assert.deepEqual(
    addons.map((a) => a.name),
    ['cache'],
    'nothing was created',
  );

  // A client that asks for the dump and stops reading at once.
  let bytes = 0;
  let closed = false;
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = get(
      `${daemon.apiUrl}/v1/addons/cache/backups/${backup.id}/dump?org=acme`,
      { headers: { authorization: `Bearer ${alice}` } },
      resolve,
    );
    req.on('error', reject);
  });
  assert.equal(response.statusCode, 200);
  response.pause();
  response.on('data', (chunk: Buffer) => (bytes += chunk.length));
  response.on('error', () => undefined);
  response.on('close', () => (closed = true));
  const started = Date.now();
  // The organisation's next backup job waits behind the download until the idle time ended it.
  const verified = JSON.parse((await ok(['addon', 'backup', 'verify', 'cache', backup.id, '--format', 'json'])).stdout) as {
    verification: string;
  };
  assert.equal(verified.verification, 'verified');
  const waited = Date.now() - started;
  assert.ok(waited >= (IDLE_SECONDS - 1) * 1000, `the verification ran after ${waited} ms, not before the idle time`);
  assert.ok(waited < 60_000, `the verification ran after ${waited} ms`);
  // Reading again, the client gets what was under way and then the end of a cut connection.
  response.resume();
  await waitUntil('the connection to end', async () => (closed ? true : undefined), 30_000);
  assert.ok(bytes < backupSize, `${bytes} of ${backupSize} bytes came: the download was cut`);
});
