import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { SLIPWAY_BIN } from '../support/cli.js';
import { freePort } from '../support/free-port.js';
import { waitUntil } from '../support/wait.js';
import { checkoutExample, createApp, deploymentLog, getThroughRouter, pushAndWait, registerSshKey } from '../support/deploy.js';
import { memoryGroup, memoryLimitOver, processUid, redisPid } from '../support/addon-servers.js';
import { RespError, respExchange } from '../../src/addons/redis/resp.js';

// One real daemon: real PostgreSQL and Redis servers, a real build of examples/node-addons
// pushed over SSH, checked over HTTP through the router.

let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let dirA: string;
let appA: string;
let appB: string;
let hostA: string;

const SHOW_VARS = 'POSTGRESQL_ADDON_HOST,POSTGRESQL_ADDON_VERSION,REDIS_HOST,REDIS_PORT,API_BASE';
const MiB = 1024 * 1024;
const PLAN = {
  redis: { maxmemoryBytes: 8 * MiB, memoryBytes: 48 * MiB },
  postgresql: { connectionLimit: 3, statementTimeoutMs: 1000, tempFileLimitKb: 2048 },
};

interface Deployment {
  id: string;
  state: string;
  cause: string;
}

async function cliOk(args: string[], options: Parameters<TestDaemon['cli']>[1] = {}): Promise<string> {
  const result = await daemon.cli(args, options);
  assert.equal(result.code, 0, `slipway ${args.join(' ')} failed:\n${result.stderr}`);
  return result.stdout;
}

async function cliJson<T>(args: string[], options: Parameters<TestDaemon['cli']>[1] = {}): Promise<T> {
  return JSON.parse(await cliOk([...args, '--format', 'json'], options)) as T;
}

async function getJson(path: string): Promise<Record<string, unknown>> {
  const response = await getThroughRouter(daemon, hostA, path);
  assert.equal(response.status, 200, `GET ${path}: ${response.body}`);
  return JSON.parse(response.body) as Record<string, unknown>;
}

function deployments(appId: string): Promise<Deployment[]> {
  return cliJson<Deployment[]>(['activity', '--app', appId, '--limit', '50']);
}

async function waitForEnd(appId: string, deploymentId: string): Promise<Deployment> {
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    const found = (await deployments(appId)).find((d) => d.id === deploymentId);
    if (found && found.state !== 'WIP') return found;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`deployment ${deploymentId} did not end`);
}

function addonEnv(name: string): Promise<Record<string, string>> {
  return cliJson<Array<{ name: string; value: string }>>(['addon', 'env', name]).then((list) =>
    Object.fromEntries(list.map((v) => [v.name, v.value])),
  );
}

function portAnswers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Runs the CLI on a terminal (util-linux `script` gives it a pty) and types `answer` at the prompt. */
function cliOnTerminal(args: string[], answer: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const command = [process.execPath, SLIPWAY_BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: { ...process.env, SLIPWAY_URL: daemon.apiUrl, SLIPWAY_TOKEN: daemon.adminToken },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    let answered = false;
    const onData = (d: Buffer) => {
      output += d;
      if (!answered && output.includes('to confirm:')) {
        answered = true;
        child.stdin.write(`${answer}\r`);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

before(async () => {
  // Keep clear of a platform that may run on this machine with the default port.
  process.env.SLIPWAY_POSTGRES_PORT = String(await freePort());
  // Small plans, so that reaching each limit takes a moment (the figures are the operator's to set).
  process.env.SLIPWAY_ADDON_PLAN_LIMITS = JSON.stringify(PLAN);
  daemon = await startDaemon();
  ({ gitEnv } = await registerSshKey(daemon));
  dirA = checkoutExample('node-addons');
  // The app's own POSTGRESQL_ADDON_VERSION must win over the add-on's.
  appA = await createApp(daemon, dirA, 'a', { SHOW_VARS, POSTGRESQL_ADDON_VERSION: 'own-override' });
  hostA = `${appA}.localhost`;
  appB = await createApp(daemon, mkdtempSync(join(tmpdir(), 'slipway-b-')), 'b');
});

after(async () => {
  await daemon?.stop();
});

test('with no add-on, the daemon starts no add-on server; providers are listed', async () => {
  assert.equal(existsSync(join(daemon.dataDir, 'postgresql')), false, 'no PostgreSQL cluster was initialised');
  assert.doesNotMatch(daemon.output(), /Add-on provider \w+ started/);
  const providers = await cliJson<Array<{ name: string; description: string }>>(['addon', 'providers']);
  assert.deepEqual(
    providers.map((p) => p.name),
    ['postgresql', 'redis', 'fs-bucket'],
  );
  const human = await cliOk(['addon', 'providers']);
  assert.match(human, /^postgresql\s+PostgreSQL/m);
  // Each plan's limits, as this daemon applies them (SLIPWAY_ADDON_PLAN_LIMITS above).
  assert.match(human, /3 connections, 256 MiB of data, statements up to 1 s, 2 MiB of temporary files per session/);
  // The server of each add-on is sized from its plan: memory, connections and the settings they give.
  assert.match(human, /a server of its own with 256 MiB of memory.*shared_buffers 32 MiB, max_connections 8, work_mem 8 MiB/);
  assert.match(human, /maxmemory 8 MiB \(noeviction\), 48 MiB of memory for the server in all/);
});

test('an unknown provider is refused with the list of providers', async () => {
  const result = await daemon.cli(['addon', 'create', 'mysql', 'x']);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /Unknown add-on provider "mysql"\. Available providers: postgresql, redis, fs-bucket/);
  assert.equal((await cliJson<unknown[]>(['addon', 'list'])).length, 0);
});

test('addon create provisions PostgreSQL and Redis for real and links the app', async () => {
  const pgAddon = await cliJson<{ id: string; name: string; provider: string; linked_apps: string[] }>([
    'addon',
    'create',
    'postgresql',
    'db',
    '--link',
    'a',
  ]);
  assert.match(pgAddon.id, /^addon_[0-9a-f-]{36}$/);
  assert.deepEqual(pgAddon.linked_apps, [appA]);
  const created = await daemon.cli(['addon', 'create', 'redis', 'cache', '--link', appA]);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stderr, /Linked to a/);

  const list = await cliJson<Array<{ name: string; provider: string; linked_apps: string[] }>>(['addon', 'list']);
  assert.deepEqual(
    list.map((a) => [a.name, a.provider, a.linked_apps]),
    [
      ['db', 'postgresql', [appA]],
      ['cache', 'redis', [appA]],
    ],
  );
  const duplicate = await daemon.cli(['addon', 'create', 'redis', 'cache']);
  assert.equal(duplicate.code, 1);
  assert.match(duplicate.stderr, /already has an add-on named "cache"/);

  const db = await addonEnv('db');
  assert.deepEqual(Object.keys(db).sort(), [
    'POSTGRESQL_ADDON_DB',
    'POSTGRESQL_ADDON_HOST',
    'POSTGRESQL_ADDON_PASSWORD',
    'POSTGRESQL_ADDON_PORT',
    'POSTGRESQL_ADDON_URI',
    'POSTGRESQL_ADDON_USER',
    'POSTGRESQL_ADDON_VERSION',
  ]);
  // A server of its own: its own port, not the shared cluster's of earlier versions.
  assert.notEqual(db.POSTGRESQL_ADDON_PORT, process.env.SLIPWAY_POSTGRES_PORT);
  assert.ok(Number(db.POSTGRESQL_ADDON_PORT) >= 15000 && Number(db.POSTGRESQL_ADDON_PORT) <= 19999, db.POSTGRESQL_ADDON_PORT);
  const cache = await addonEnv('cache');
  assert.deepEqual(Object.keys(cache).sort(), ['REDIS_HOST', 'REDIS_PASSWORD', 'REDIS_PORT', 'REDIS_URL']);
  assert.match(daemon.output(), /Add-on provider postgresql started/);
});

test("each PostgreSQL add-on's server is its own: other credentials open nothing, a runaway query stops only there", async () => {
  await cliJson(['addon', 'create', 'postgresql', 'other']);
  const db = await addonEnv('db');
  const other = await addonEnv('other');
  assert.notEqual(other.POSTGRESQL_ADDON_PORT, db.POSTGRESQL_ADDON_PORT);
  // The other add-on's credentials, right host, this add-on's port: no such role on this server.
  const stranger = new pg.Client({
    connectionString: `postgresql://${other.POSTGRESQL_ADDON_USER}:${other.POSTGRESQL_ADDON_PASSWORD}@${db.POSTGRESQL_ADDON_HOST}:${db.POSTGRESQL_ADDON_PORT}/${other.POSTGRESQL_ADDON_DB}`,
    connectionTimeoutMillis: 5000,
  });
  await assert.rejects(stranger.connect(), /password authentication failed|does not exist/);

  // A sort held in memory far past the plan's 256 MiB: the kernel ends it inside that server's group.
  const hungry = new pg.Client({ connectionString: other.POSTGRESQL_ADDON_URI, connectionTimeoutMillis: 5000 });
  hungry.on('error', () => undefined);
  await hungry.connect();
  await hungry.query(`SET statement_timeout = 0`);
  await hungry.query(`SET work_mem = '4GB'`);
  await assert.rejects(
    hungry.query(`SELECT count(*) FROM (SELECT g, md5(g::text) AS h FROM generate_series(1, 30000000) g ORDER BY h) s`),
    /terminat|closed|Connection|ECONNRESET|out of memory/i,
  );
  await hungry.end().catch(() => undefined);
  // The add-on next door never noticed, and the one that ran away answers again once recovered.
  const neighbour = new pg.Client({ connectionString: db.POSTGRESQL_ADDON_URI, connectionTimeoutMillis: 5000 });
  await neighbour.connect();
  const { rows } = await neighbour.query<{ up: string }>(`SELECT (now() - pg_postmaster_start_time())::text AS up`);
  await neighbour.end();
  assert.ok(rows[0]!.up, 'the neighbour answers');
  await waitUntil('the add-on that ran out of memory to answer again', async () => {
    const again = new pg.Client({ connectionString: other.POSTGRESQL_ADDON_URI, connectionTimeoutMillis: 2000 });
    try {
      await again.connect();
      await again.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await again.end().catch(() => undefined);
    }
  });
  await cliOk(['addon', 'delete', 'other', '--yes']);
});

function addonId(name: string): Promise<string> {
  return cliJson<Array<{ id: string; name: string }>>(['addon', 'list']).then((list) => list.find((a) => a.name === name)!.id);
}

function redisCall(env: Record<string, string>, ...command: string[]) {
  return respExchange('127.0.0.1', Number(env.REDIS_PORT), [['AUTH', env.REDIS_PASSWORD!], command]).then((r) => r[1]);
}

test("each Redis add-on runs as its own user in its own control group with the plan's memory, and stops at maxmemory", async () => {
  await cliOk(['addon', 'create', 'redis', 'cache2']);
  const [id1, id2] = [await addonId('cache'), await addonId('cache2')];
  const [pid1, pid2] = [redisPid(daemon.dataDir, id1), redisPid(daemon.dataDir, id2)];
  const [uid1, uid2] = [processUid(pid1), processUid(pid2)];
  assert.notEqual(uid1, uid2, 'two users');
  assert.ok(uid1 >= 2_200_000 && uid2 >= 2_200_000, `the add-ons' own users (${uid1}, ${uid2})`);
  assert.match(execFileSync('getent', ['passwd', String(uid1)], { encoding: 'utf8' }), new RegExp(`slipway Redis add-on ${id1}`));
  assert.equal(statSync(join(daemon.dataDir, 'redis', id1, 'redis.conf')).uid, uid1);
  assert.notEqual(memoryGroup(pid1), memoryGroup(pid2), 'two control groups');
  assert.equal(memoryLimitOver(pid1), PLAN.redis.memoryBytes);
  assert.equal(memoryLimitOver(pid2), PLAN.redis.memoryBytes);

  const cache2 = await addonEnv('cache2');
  assert.deepEqual(await redisCall(cache2, 'CONFIG', 'GET', 'maxmemory'), ['maxmemory', String(PLAN.redis.maxmemoryBytes)]);
  assert.deepEqual(await redisCall(cache2, 'CONFIG', 'GET', 'maxmemory-policy'), ['maxmemory-policy', 'noeviction']);
  // Filled past maxmemory, the server refuses writes (noeviction) and keeps every key it took.
  const value = 'x'.repeat(256 * 1024);
  let stored = 0;
  let refusal: RespError | undefined;
  for (let i = 0; i < 200 && !refusal; i++) {
    const reply = await redisCall(cache2, 'SET', `k${i}`, value);
    if (reply instanceof RespError) refusal = reply;
    else stored++;
  }
  assert.match(refusal?.message ?? 'no refusal', /^OOM /);
  assert.ok(stored > 10 && stored < 40, `about 8 MiB of 256 KiB values were taken (${stored})`);
  assert.equal(await redisCall(cache2, 'DBSIZE'), stored, 'nothing evicted');
  const info = String(await redisCall(cache2, 'INFO', 'memory'));
  assert.ok(Number(/^used_memory:(\d+)/m.exec(info)?.[1]) < PLAN.redis.maxmemoryBytes + MiB, 'the data set did not grow past maxmemory');

  const user2 = execFileSync('getent', ['passwd', String(uid2)], { encoding: 'utf8' }).split(':')[0]!;
  await cliOk(['addon', 'delete', 'cache2', '--yes']);
  assert.equal(spawnSync('getent', ['passwd', user2]).status, 2, "the deleted add-on's user is removed");
});

test("the PostgreSQL add-on's role has the plan's connection limit, statement timeout and temporary file limit", async () => {
  const db = await addonEnv('db');
  const clients: pg.Client[] = [];
  const open = async () => {
    const client = new pg.Client({ connectionString: db.POSTGRESQL_ADDON_URI, connectionTimeoutMillis: 5000 });
    client.on('error', () => undefined);
    clients.push(client);
    await client.connect();
    return client;
  };
  try {
    const first = await open();
    assert.deepEqual((await first.query('SHOW statement_timeout')).rows, [{ statement_timeout: '1s' }]);
    assert.deepEqual((await first.query('SHOW temp_file_limit')).rows, [{ temp_file_limit: '2MB' }]);
    await assert.rejects(first.query('SELECT pg_sleep(3)'), /canceling statement due to statement timeout/);
    await assert.rejects(first.query('SET temp_file_limit = -1'), /permission denied/);
    await open();
    await open();
    await assert.rejects(open(), /too many connections for role/);
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  }
});

test('the deployed app reaches PostgreSQL and Redis with the injected variables; secrets stay out of the deploy log', async () => {
  const result = await pushAndWait(daemon, dirA, appA, gitEnv);
  const log = await deploymentLog(daemon, appA, result.id);
  assert.equal(result.state, 'OK', log.join('\n'));

  const db = await addonEnv('db');
  const cache = await addonEnv('cache');
  const query = await getJson('/db');
  assert.equal(query.sum, 2);
  assert.equal(query.database, db.POSTGRESQL_ADDON_DB);
  assert.equal(query.user, db.POSTGRESQL_ADDON_USER);
  const setGet = await getJson('/cache');
  assert.match(String(setGet.set), /^set at /);
  assert.equal(setGet.got, setGet.set);

  const seen = (await getJson('/')).env as Record<string, string | null>;
  assert.equal(seen.REDIS_HOST, cache.REDIS_HOST);
  assert.equal(seen.POSTGRESQL_ADDON_HOST, db.POSTGRESQL_ADDON_HOST);
  assert.equal(seen.POSTGRESQL_ADDON_VERSION, 'own-override', "the app's own variable overrides the add-on's");

  // The example's postinstall prints REDIS_URL and the PostgreSQL password during the build.
  const text = log.join('\n');
  assert.match(text, /build sees REDIS_URL=\[redacted\] and POSTGRESQL_ADDON_PASSWORD=\[redacted\]/);
  for (const secret of [cache.REDIS_PASSWORD!, cache.REDIS_URL!, db.POSTGRESQL_ADDON_PASSWORD!, db.POSTGRESQL_ADDON_URI!]) {
    assert.equal(text.includes(secret), false, 'a secret reached the deploy log');
  }
});

test('slipway env shows the own variables, then each add-on, then each linked app, and says which value wins', async () => {
  await cliOk(['service', 'link-app', 'b', '--app', 'a']);
  await cliOk(['published-config', 'set', 'API_BASE', 'http://b.internal', '--app', 'b']);
  const sections = await cliJson<Array<{ source: string; env: Array<{ name: string; value: string }> }>>(['env', '--app', 'a']);
  assert.deepEqual(
    sections.map((s) => s.source),
    ['application', 'add-on cache (redis)', 'add-on db (postgresql)', 'linked app b'],
  );
  assert.deepEqual(
    sections[0]!.env.map((v) => v.name),
    ['POSTGRESQL_ADDON_VERSION', 'SHOW_VARS'],
  );
  assert.deepEqual(sections[3]!.env, [{ name: 'API_BASE', value: 'http://b.internal' }]);

  const human = await cliOk(['env', '--app', 'a']);
  const headers = human.split('\n').filter((l) => l.startsWith('# '));
  assert.deepEqual(headers, [
    '# application',
    '# add-on cache (redis): not read by env import',
    '# add-on db (postgresql): not read by env import',
    '# linked app b: not read by env import',
  ]);
  // Saved and imported again, the add-ons' and the linked app's sections stay theirs.
  const reimported = await daemon.cli(['env', 'import', '--app', 'a'], { stdin: human });
  assert.equal(reimported.code, 0, reimported.stderr);
  assert.match(reimported.stderr, /Left out \d+ variable\(s\) of add-on db \(postgresql\)/);
  const again = await cliJson<Array<{ source: string; env: Array<{ name: string; value: string }> }>>(['env', '--app', 'a']);
  assert.deepEqual(again, sections);

  const services = await cliJson<{ addons: Array<{ name: string }>; apps: Array<{ id: string; name: string }> }>(['service', '--app', 'a']);
  assert.deepEqual(
    services.addons.map((a) => a.name),
    ['db', 'cache'],
  );
  assert.deepEqual(services.apps, [{ id: appB, name: 'b' }]);
});

test("changing a linked app's exposed config restarts the app linked to it, which then sees the value; an add-on beats a linked app", async () => {
  const before = await deployments(appA);
  // B also exposes REDIS_HOST: A's redis add-on must keep winning.
  const set = await daemon.cli(['published-config', 'set', 'REDIS_HOST', 'from-b', '--app', 'b']);
  assert.equal(set.code, 0, set.stderr);
  const restart = new RegExp(`Restarting a \\(${appA}\\), linked to this application: deployment (deployment_[0-9a-f-]{36})`).exec(
    set.stderr,
  );
  assert.ok(restart, set.stderr);
  const after = await deployments(appA);
  assert.equal(after.length, before.length + 1);
  assert.equal(after[0]!.id, restart[1]);
  assert.equal(after[0]!.cause, 'exposed configuration of b changed');
  const ended = await waitForEnd(appA, restart[1]!);
  const log = await deploymentLog(daemon, appA, ended.id);
  assert.equal(ended.state, 'OK', log.join('\n'));
  assert.ok(
    log.some((l) => l.includes('Reusing the release')),
    `a restart, not a rebuild:\n${log.join('\n')}`,
  );

  const seen = (await getJson('/')).env as Record<string, string | null>;
  assert.equal(seen.API_BASE, 'http://b.internal', "the linked app's exposed variable reached the running app");
  assert.equal(seen.REDIS_HOST, (await addonEnv('cache')).REDIS_HOST, "the add-on's REDIS_HOST wins over the linked app's");
  assert.equal((await getJson('/cache')).got !== undefined, true);

  // The same value again changes nothing, so nothing restarts.
  const again = await daemon.cli(['published-config', 'set', 'REDIS_HOST', 'from-b', '--app', 'b']);
  assert.doesNotMatch(again.stderr, /Restarting/);
  assert.equal((await deployments(appA)).length, after.length);
  assert.deepEqual(await cliJson(['published-config', '--app', 'b']), [
    { name: 'API_BASE', value: 'http://b.internal' },
    { name: 'REDIS_HOST', value: 'from-b' },
  ]);
});

/** GET `path` through the router until the app answers 200 (it may be coming back), at most a minute. */
async function getJsonOnceServing(path: string): Promise<Record<string, unknown> | undefined> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const response = await getThroughRouter(daemon, hostA, path).catch(() => undefined);
    if (response?.status === 200) return JSON.parse(response.body) as Record<string, unknown>;
    await new Promise((r) => setTimeout(r, 500));
  }
  return undefined;
}

test('after a daemon restart the add-on servers come back before the app, which reads back what it wrote before', async () => {
  assert.deepEqual(await getJson('/remember?value=before-restart'), { remembered: 'before-restart' });
  const folder = join(daemon.dataDir, 'redis', await addonId('cache'));
  await daemon.stop();
  // What the previous version left: the folder of the one account every Redis server ran as.
  execFileSync('chown', ['-R', 'slipway-redis:slipway-redis', folder]);
  await daemon.restart();
  assert.match(daemon.output(), /Resumed 2 add-on\(s\)/);
  const owner = processUid(redisPid(daemon.dataDir, await addonId('cache')));
  assert.ok(owner >= 2_200_000, `the server runs as the add-on's own user (${owner})`);
  assert.equal(statSync(folder).uid, owner, "the folder is handed to the add-on's user");
  assert.equal(statSync(join(folder, 'dump.rdb')).uid, owner, 'down the tree');
  assert.deepEqual(await getJsonOnceServing('/recall'), { database: ['before-restart'], cache: ['before-restart'] });
});

test('after a kill -9 of the daemon, its bridge left with no port, add-ons resume and a new one is created', async () => {
  assert.deepEqual(await getJson('/remember?value=before-kill'), { remembered: 'before-kill' });
  await daemon.kill();
  await daemon.restart();
  // The restart removed the dead instances' ports before the add-ons resumed: the bridge had
  // no carrier then, and still holds the gateway the servers listen on.
  assert.match(daemon.output(), /Resumed 2 add-on\(s\)/);
  const created = await daemon.cli(['addon', 'create', 'redis', 'after-crash']);
  assert.equal(created.code, 0, created.stderr);
  const fresh = await addonEnv('after-crash');
  assert.equal(await portAnswers(fresh.REDIS_HOST!, Number(fresh.REDIS_PORT)), true, 'the new server listens on the gateway');
  await cliOk(['addon', 'delete', 'after-crash', '--yes']);

  assert.deepEqual(
    await getJsonOnceServing('/recall'),
    { database: ['before-kill', 'before-restart'], cache: ['before-kill', 'before-restart'] },
    'the app reads back from both add-ons what it wrote before the kill',
  );
});

test("another organisation's user cannot see, read or link the add-ons", async () => {
  const created = JSON.parse(await cliOk(['user', 'create', 'eve', '--format', 'json'])) as { token: string };
  const token = created.token;
  const { id } = (await cliJson<Array<{ id: string; name: string }>>(['addon', 'list'])).find((a) => a.name === 'db')!;
  assert.deepEqual(await cliJson(['addon', 'list'], { token }), []);
  const env = await daemon.cli(['addon', 'env', id], { token });
  assert.equal(env.code, 1);
  assert.match(env.stderr, /No add-on "addon_/);
  const byName = await daemon.cli(['addon', 'env', 'db'], { token });
  assert.match(byName.stderr, /No add-on "db" among yours/);
  const response = await fetch(`${daemon.apiUrl}/v1/addons/${id}`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(response.status, 404);
  const removal = await fetch(`${daemon.apiUrl}/v1/addons/${id}?unlink=1`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(removal.status, 404);

  await cliOk(['org', 'create', 'eve-org'], { token });
  const eveApp = (
    await cliOk(['create', '--type', 'node', 'eve-app', '--region', 'par', '--org', 'eve-org'], {
      token,
      cwd: mkdtempSync(join(tmpdir(), 'slipway-eve-')),
    })
  ).trim();
  const steal = await daemon.cli(['service', 'link-addon', id, '--app', eveApp], { token });
  assert.equal(steal.code, 1);
  assert.match(steal.stderr, /No add-on "addon_/);
  const link = await fetch(`${daemon.apiUrl}/v1/apps/${appA}/services/addons`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ addon: id }),
  });
  assert.equal(link.status, 404, 'eve cannot reach app a either');
});

test('delete is refused while linked, asks for confirmation, and with --unlink --yes destroys the data', async () => {
  const cache = await addonEnv('cache');
  const db = await addonEnv('db');
  const { id: cacheId } = (await cliJson<Array<{ id: string; name: string }>>(['addon', 'list'])).find((a) => a.name === 'cache')!;

  const noTty = await daemon.cli(['addon', 'delete', 'cache']);
  assert.equal(noTty.code, 1);
  assert.match(noTty.stderr, /No terminal to confirm on/);
  assert.match(noTty.stderr, /Pass --yes/);

  const linked = await daemon.cli(['addon', 'delete', 'cache', '--yes']);
  assert.equal(linked.code, 1);
  assert.match(linked.stderr, /The add-on cache is linked to 1 application\(s\): a\./);
  assert.match(linked.stderr, /--unlink/);
  assert.equal(await portAnswers('127.0.0.1', Number(cache.REDIS_PORT)), true, 'nothing was deleted');

  // On a terminal the name must be typed: a wrong answer keeps the add-on, the right one deletes it.
  await cliOk(['addon', 'create', 'redis', 'scratch']);
  const wrong = await cliOnTerminal(['addon', 'delete', 'scratch'], 'nope');
  assert.equal(wrong.code, 1, wrong.output);
  assert.match(wrong.output, /Delete the redis add-on "scratch" and all its data\?/);
  assert.match(wrong.output, /Not confirmed; nothing was changed/);
  const right = await cliOnTerminal(['addon', 'delete', 'scratch'], 'scratch');
  assert.equal(right.code, 0, right.output);
  assert.match(right.output, /Deleted add-on scratch/);

  await cliOk(['addon', 'delete', 'cache', '--unlink', '--yes']);
  assert.deepEqual(
    (await cliJson<Array<{ name: string }>>(['addon', 'list'])).map((a) => a.name),
    ['db'],
  );
  assert.equal(existsSync(join(daemon.dataDir, 'redis', cacheId)), false, "the add-on's data folder is gone");
  assert.equal(await portAnswers('127.0.0.1', Number(cache.REDIS_PORT)), false, 'its server is stopped');
  const services = await cliJson<{ addons: Array<{ name: string }> }>(['service', '--app', 'a']);
  assert.deepEqual(
    services.addons.map((a) => a.name),
    ['db'],
  );

  // Unlinking first, then deleting: the add-on's server goes for real, with its folder and user.
  const dbId = await addonId('db');
  const serverFolder = join(daemon.dataDir, 'postgresql', dbId);
  const serverUid = statSync(join(serverFolder, 'data')).uid;
  await cliOk(['service', 'unlink-addon', 'db', '--app', 'a']);
  await cliOk(['addon', 'delete', 'db', '--yes']);
  const client = new pg.Client({ connectionString: db.POSTGRESQL_ADDON_URI, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  await assert.rejects(client.connect(), /ECONNREFUSED/, 'no server answers at its port any more');
  await client.end().catch(() => undefined);
  assert.equal(existsSync(serverFolder), false, "the server's folder is gone");
  assert.equal(spawnSync('getent', ['passwd', String(serverUid)]).status, 2, "the server's user is gone");
  assert.deepEqual(await cliJson(['addon', 'list']), []);
});
