/**
 * Add-on servers are the data plane: a real daemon's PostgreSQL and Redis servers are killed
 * with -9 and come back by themselves with their data (WAL, AOF), counted in /metrics and told
 * to the linked app's log; a SIGTERM or a kill -9 of the daemon leaves them serving (same
 * process), the next daemon adopts them without a restart and watches them again; `system stop`
 * ends them.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { sql as sqlAt } from '../support/addon-cli.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { createApp } from '../support/deploy.js';
import { freePort } from '../support/free-port.js';
import { waitUntil } from '../support/wait.js';
import { readPidFile } from '../../src/executor/pid-file.js';
import { pidAlive } from '../../src/executor/pid-alive.js';
import { respExchange } from '../../src/addons/redis/resp.js';

let daemon: TestDaemon;
let metricsPort: number;
let appId: string;
let db: Record<string, string>;
let cache: Record<string, string>;
let cacheId: string;
let dbId: string;
let stopped = false;

async function cliJson<T>(args: string[]): Promise<T> {
  const result = await daemon.cli([...args, '--format', 'json']);
  assert.equal(result.code, 0, `slipway ${args.join(' ')} failed:\n${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

async function addonEnv(name: string): Promise<Record<string, string>> {
  const list = await cliJson<Array<{ name: string; value: string }>>(['addon', 'env', name]);
  return Object.fromEntries(list.map((v) => [v.name, v.value]));
}

// Each PostgreSQL add-on has a server of its own, in its own folder.
const postgresPid = () => readPidFile(join(daemon.dataDir, 'postgresql', dbId, 'data', 'postmaster.pid'));
const redisPid = () => readPidFile(join(daemon.dataDir, 'redis', cacheId, 'redis.pid'));

/** A connection of its own for each call, as an app opening a new one would. */
const sql = <T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> =>
  sqlAt<T>(db.POSTGRESQL_ADDON_URI!, text, values, 3000);

async function redis(...command: string[]): Promise<unknown> {
  const [auth, reply] = await respExchange(cache.REDIS_HOST!, Number(cache.REDIS_PORT), [['AUTH', cache.REDIS_PASSWORD!], command], 3000);
  assert.equal(auth, 'OK');
  return reply;
}

async function notes(): Promise<string[]> {
  return (await sql<{ v: string }>('SELECT v FROM notes ORDER BY id')).map((r) => r.v);
}

const restartsLogged = () => daemon.output().match(/ restarted: now pid \d+/g)?.length ?? 0;

/**
 * Kills the server with -9 and waits until another process serves again and the daemon has
 * logged the restart (it does so once its own probe answers, a moment after ours may); returns
 * the new pid.
 */
async function killAndAwaitRestart(pidOf: () => Promise<number | undefined>, answers: () => Promise<boolean>): Promise<number> {
  const before = await pidOf();
  assert.ok(before && pidAlive(before), 'the server runs before it is killed');
  const logged = restartsLogged();
  process.kill(before, 'SIGKILL');
  return waitUntil(
    'the server to be restarted',
    async () => {
      const now = await pidOf();
      const serving = now !== undefined && now !== before && pidAlive(now) && !pidAlive(before) && (await answers());
      return serving && restartsLogged() === logged + 1 ? now : undefined;
    },
    60_000,
  );
}

async function restartCount(provider: string): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const match = new RegExp(`^slipway_addon_server_restarts_total\\{provider="${provider}"\\} (\\d+)$`, 'm').exec(text);
  return match ? Number(match[1]) : undefined;
}

before(async () => {
  // Ports of this test's own, clear of a platform (or another test) on this machine.
  const redisPort = await freePort();
  process.env.SLIPWAY_REDIS_PORTS = `${redisPort}-${redisPort}`;
  metricsPort = await freePort();
  daemon = await startDaemon(['--metrics-listen', `127.0.0.1:${metricsPort}`]);
  appId = await createApp(daemon, mkdtempSync(join(tmpdir(), 'slipway-resilience-')), 'shop');
  dbId = (await cliJson<{ id: string }>(['addon', 'create', 'postgresql', 'db', '--link', appId])).id;
  cacheId = (await cliJson<{ id: string }>(['addon', 'create', 'redis', 'cache', '--link', appId])).id;
  db = await addonEnv('db');
  cache = await addonEnv('cache');
});

after(async () => {
  if (!daemon) return;
  const pids = [await postgresPid(), await redisPid()];
  if (!stopped) await daemon.stop();
  // Whatever a failed test left behind must not outlive the file.
  for (const pid of pids) if (pid && pidAlive(pid)) process.kill(pid, 'SIGKILL');
});

test('a PostgreSQL server killed with -9 is restarted with its committed data', async () => {
  assert.equal(await restartCount('postgresql'), 0, 'the series is there before the first restart');
  await sql('CREATE TABLE notes (id serial PRIMARY KEY, v text NOT NULL)');
  await sql('INSERT INTO notes (v) VALUES ($1)', ['committed before the kill']);
  const began = Date.now();
  await killAndAwaitRestart(postgresPid, async () => (await sql('SELECT 1')).length === 1);
  console.log(`PostgreSQL served again ${Date.now() - began} ms after its kill -9`);
  assert.deepEqual(await notes(), ['committed before the kill']);
  assert.match(
    daemon.output(),
    /The PostgreSQL server of add-on addon_[0-9a-f-]+ restarted: now pid \d+ \(the previous process killed by SIGKILL\)/,
  );
  assert.equal(await restartCount('postgresql'), 1);
});

test('a Redis server killed with -9 is restarted with the writes of its AOF', async () => {
  assert.equal(await redis('SET', 'greeting', 'written before the kill'), 'OK');
  assert.equal(await redis('RPUSH', 'events', 'one', 'two'), 2);
  // With everysec Redis may hold the last writes in memory while a slow disk finishes the previous
  // fsync, for up to two seconds (the window operations.md states); the kill comes once they are in
  // the file, which must happen within that window.
  await waitUntil(
    'the writes to reach the AOF',
    async () => (/^aof_buffer_length:0\r?$/m.test(String(await redis('INFO', 'persistence'))) ? true : undefined),
    3000,
  );
  const began = Date.now();
  await killAndAwaitRestart(redisPid, async () => (await redis('PING')) === 'PONG');
  console.log(`Redis served again ${Date.now() - began} ms after its kill -9`);
  assert.equal(await redis('GET', 'greeting'), 'written before the kill');
  assert.deepEqual(await redis('LRANGE', 'events', '0', '-1'), ['one', 'two']);
  assert.match(daemon.output(), new RegExp(`The Redis server of add-on ${cacheId} restarted: now pid \\d+`));
  assert.equal(await restartCount('redis'), 1);
  assert.equal(await restartCount('postgresql'), 1, 'each provider counts its own');
});

test("the restarts are told in the linked app's log", async () => {
  const result = await daemon.cli(['logs', '--app', appId, '--no-follow']);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /The postgresql add-on server this app uses stopped \(killed by SIGKILL\) and was restarted\./);
  assert.match(result.stdout, /The redis add-on server this app uses stopped \(killed by SIGKILL\) and was restarted\./);
});

test('a SIGTERM of the daemon leaves both servers serving; the next daemon adopts them and watches them again', async () => {
  const pgBefore = await postgresPid();
  const redisBefore = await redisPid();
  await sql('INSERT INTO notes (v) VALUES ($1)', ['before the daemon stopped']);
  assert.equal(await redis('SET', 'phase', 'before the daemon stopped'), 'OK');

  const code = await daemon.terminate();
  assert.equal(code, 0, daemon.output());
  // No daemon: the same processes serve, reads and writes alike.
  assert.equal(await postgresPid(), pgBefore);
  assert.equal(await redisPid(), redisBefore);
  assert.ok(pidAlive(pgBefore!) && pidAlive(redisBefore!));
  await sql('INSERT INTO notes (v) VALUES ($1)', ['while no daemon ran']);
  assert.equal(await redis('SET', 'unwatched', 'yes'), 'OK');

  await daemon.restart();
  assert.equal(await postgresPid(), pgBefore, 'PostgreSQL adopted, not restarted');
  assert.equal(await redisPid(), redisBefore, 'Redis adopted, not restarted');
  assert.deepEqual(await notes(), ['committed before the kill', 'before the daemon stopped', 'while no daemon ran']);
  assert.equal(await redis('GET', 'phase'), 'before the daemon stopped');
  assert.equal(await redis('GET', 'unwatched'), 'yes');
  assert.doesNotMatch(daemon.output(), /restarted: now pid/, 'nothing was restarted by this daemon yet');

  // Adopted servers are not this daemon's children: it still sees them die and starts them again.
  await killAndAwaitRestart(postgresPid, async () => (await sql('SELECT 1')).length === 1);
  await killAndAwaitRestart(redisPid, async () => (await redis('PING')) === 'PONG');
  assert.equal(await restartCount('postgresql'), 1);
  assert.equal(await restartCount('redis'), 1);
  assert.equal(await redis('GET', 'unwatched'), 'yes');
  assert.equal((await notes()).length, 3);
});

test('a kill -9 of the daemon leaves both servers serving and the next daemon adopts them', async () => {
  const pgBefore = await postgresPid();
  const redisBefore = await redisPid();
  await daemon.kill();
  assert.ok(pidAlive(pgBefore!) && pidAlive(redisBefore!));
  assert.equal((await sql('SELECT 1')).length, 1);
  assert.equal(await redis('PING'), 'PONG');
  await daemon.restart();
  assert.equal(await postgresPid(), pgBefore);
  assert.equal(await redisPid(), redisBefore);
  assert.equal(await redis('GET', 'phase'), 'before the daemon stopped');
});

test('system stop stops both servers cleanly', async () => {
  const pids = [await postgresPid(), await redisPid()];
  assert.ok(pids.every((pid) => pid && pidAlive(pid)));
  stopped = true;
  const code = await daemon.stop();
  assert.equal(code, 0, daemon.output());
  assert.deepEqual(
    pids.map((pid) => pidAlive(pid!)),
    [false, false],
  );
  // Their own last words: a shutdown, not a kill.
  const lastLine = (file: string) => readFileSync(file, 'utf8').trim().split('\n').at(-1)!;
  assert.match(lastLine(join(daemon.dataDir, 'postgresql', dbId, 'postgres.log')), /database system is shut down/);
  assert.match(lastLine(join(daemon.dataDir, 'redis', cacheId, 'redis.log')), /ready to exit, bye bye/);
});
