/**
 * Redis add-on backups through the CLI of a real daemon: a snapshot is taken with its key count
 * and loaded into a throw-away server before it counts as verified; restored into a new add-on
 * or in place (a safety backup first, same password), it brings back exactly the keys it holds,
 * in every database, with their TTLs; a time is refused (Redis restores to a snapshot); a
 * download is the RDB file itself; a snapshot whose bytes were overwritten in the store fails
 * every restore, the download and its restore test, named, before anything is touched.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, readSync, closeSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { respExchange, type RespReply } from '../../src/addons/redis/resp.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { createApp } from '../support/deploy.js';
import { restoreTested } from '../support/addon-cli.js';

interface Backup {
  id: string;
  kind: string;
  size_bytes: number;
  verification: 'pending' | 'verified' | 'failed';
  verification_detail: string;
  counts: Record<string, number>;
}

let daemon: TestDaemon;
let appId: string;
let cacheId: string;
let firstBackup: string;
const scratch = mkdtempSync(join(tmpdir(), 'slipway-redis-backups-'));

async function cliJson<T>(args: string[]): Promise<T> {
  const result = await daemon.cli([...args, '--format', 'json'], { timeoutMs: 600_000 });
  assert.equal(result.code, 0, `slipway ${args.join(' ')} failed:\n${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

async function addonEnv(name: string): Promise<Record<string, string>> {
  const list = await cliJson<Array<{ name: string; value: string }>>(['addon', 'env', name]);
  return Object.fromEntries(list.map((v) => [v.name, v.value]));
}

/** Commands on one connection, as an app holding the add-on's credentials sends them (database 0 first). */
async function redis(addon: string, ...commands: string[][]): Promise<RespReply[]> {
  const env = await addonEnv(addon);
  const replies = await respExchange(env.REDIS_HOST!, Number(env.REDIS_PORT), [['AUTH', env.REDIS_PASSWORD!], ...commands], 5000);
  assert.equal(replies[0], 'OK');
  return replies.slice(1);
}

/** Every key of databases 0 and 2 with its value, and which of them expire. */
async function contents(addon: string): Promise<{ keys: Record<string, unknown>; expiring: string[] }> {
  const [keys0] = await redis(addon, ['KEYS', '*']);
  const [, keys2] = await redis(addon, ['SELECT', '2'], ['KEYS', '*']);
  const read = async (db: string, key: string) => {
    const [, type, ttl] = await redis(addon, ['SELECT', db], ['TYPE', key], ['PTTL', key]);
    const [, value] = await redis(
      addon,
      ['SELECT', db],
      type === 'list' ? ['LRANGE', key, '0', '-1'] : type === 'hash' ? ['HGETALL', key] : ['GET', key],
    );
    return { value, ttl: Number(ttl) };
  };
  const found: Record<string, unknown> = {};
  const expiring: string[] = [];
  for (const [db, keys] of [
    ['0', keys0],
    ['2', keys2],
  ] as const) {
    for (const key of (keys as string[]).sort()) {
      const { value, ttl } = await read(db, key);
      found[`${db}:${key}`] = value;
      if (ttl !== -1) {
        assert.ok(ttl > 3_000_000 && ttl <= 3_600_000, `the TTL of ${key} is kept (${ttl} ms left)`);
        expiring.push(`${db}:${key}`);
      }
    }
  }
  return { keys: found, expiring };
}

const FIRST = {
  keys: { '0:greeting': 'hello', '0:events': ['one', 'two'], '0:user:1': ['name', 'Ada'], '0:session': 'abc', '2:elsewhere': 'db two' },
  expiring: ['0:session'],
};

async function backups(addon = 'cache'): Promise<Backup[]> {
  return cliJson<Backup[]>(['addon', 'backups', addon]);
}

async function settled(id: string, addon = 'cache'): Promise<Backup> {
  return restoreTested<Backup>(daemon, addon, id);
}

async function addonNames(): Promise<string[]> {
  return (await cliJson<Array<{ name: string }>>(['addon', 'list'])).map((a) => a.name).sort();
}

before(async () => {
  daemon = await startDaemon();
  appId = await createApp(daemon, mkdtempSync(join(scratch, 'app-')), 'shop');
  cacheId = (await cliJson<{ id: string }>(['addon', 'create', 'redis', 'cache', '--link', appId])).id;
});

after(async () => {
  if (daemon) {
    await daemon.stop();
    rmSync(`${daemon.dataDir}-backups`, { recursive: true, force: true });
  }
  rmSync(scratch, { recursive: true, force: true });
});

test('a snapshot is stored with its key count, then loaded by a throw-away server before it counts as verified', async () => {
  const written = await redis(
    'cache',
    ['SET', 'greeting', 'hello'],
    ['RPUSH', 'events', 'one', 'two'],
    ['HSET', 'user:1', 'name', 'Ada'],
    ['SET', 'session', 'abc', 'PX', '3600000'],
    ['SELECT', '2'],
    ['SET', 'elsewhere', 'db two'],
  );
  assert.deepEqual(written, ['OK', 2, 1, 'OK', 'OK', 'OK']);
  const taken = await daemon.cli(['addon', 'backup', 'cache'], { timeoutMs: 600_000 });
  assert.equal(taken.code, 0, taken.stderr);
  firstBackup = taken.stdout.trim();
  assert.match(firstBackup, /^backup_[0-9a-z]+$/);
  const backup = await settled(firstBackup);
  assert.equal(backup.verification, 'verified', backup.verification_detail);
  assert.deepEqual(backup.counts, { keys: 5 }, 'the keys of every database, not only those of database 0');
  assert.match(backup.verification_detail, /^1 stored object matches its SHA-256; loaded by redis-server; 5 keys as counted$/);
  assert.equal(backup.kind, 'manual');
  const human = await daemon.cli(['addon', 'backups', 'cache']);
  assert.match(human.stdout, new RegExp(`${firstBackup}.*manual.*verified`));
  assert.match(human.stderr, /Restorable to any of these backups that did not fail its restore test/);
  assert.deepEqual(await contents('cache'), FIRST);
});

test('a restore into a new add-on brings back exactly the keys of the snapshot, TTLs kept', async () => {
  await redis('cache', ['SET', 'later', 'after the backup'], ['DEL', 'greeting'], ['SELECT', '2'], ['SET', 'elsewhere', 'changed']);
  const restored = await cliJson<{ addon: { name: string } }>(['addon', 'restore', 'cache', '--backup', firstBackup, '--as', 'cache-then']);
  assert.equal(restored.addon.name, 'cache-then');
  const [source, copy] = [await addonEnv('cache'), await addonEnv('cache-then')];
  assert.notEqual(copy.REDIS_URL, source.REDIS_URL, 'a new add-on has a server and credentials of its own');
  assert.deepEqual(await contents('cache-then'), FIRST);
  const now = await contents('cache');
  assert.equal(now.keys['0:later'], 'after the backup', 'the source is untouched');
  assert.equal(now.keys['0:greeting'], undefined);
});

test('a time is refused: a Redis add-on restores to a snapshot, not to a second', async () => {
  const before = await contents('cache');
  for (const args of [
    ['--to', new Date().toISOString(), '--as', 'cache-x'],
    ['--to', new Date().toISOString(), '--yes'],
  ]) {
    const result = await daemon.cli(['addon', 'restore', 'cache', ...args]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /cache is a Redis add-on: it restores to a snapshot, not to a second/);
    assert.match(result.stderr, /--backup <id>/);
  }
  assert.deepEqual(await contents('cache'), before, 'nothing was changed');
  assert.deepEqual(await addonNames(), ['cache', 'cache-then'], 'no add-on was left behind');
});

test('a restore in place keeps the password and port, takes a safety backup first and tells the linked app', async () => {
  const url = (await addonEnv('cache')).REDIS_URL;
  const result = await cliJson<{ safety_backup: string }>(['addon', 'restore', 'cache', '--backup', firstBackup, '--yes']);
  assert.match(result.safety_backup, /^backup_/);
  assert.equal((await addonEnv('cache')).REDIS_URL, url);
  assert.deepEqual(await contents('cache'), FIRST, 'the same credentials read the snapshot keys, and only those');
  const log = (await daemon.cli(['logs', '--app', appId, '--no-follow'])).stdout;
  assert.match(log, new RegExp(`The add-on cache is being restored to backup ${firstBackup}: it is emptied and refilled meanwhile`));
  assert.match(log, /The add-on cache was restored to /);
  // The safety backup holds what was there before: restored into a new add-on, it has the later keys.
  const safety = await settled(result.safety_backup);
  assert.equal(safety.kind, 'safety');
  assert.equal(safety.verification, 'verified', safety.verification_detail);
  await cliJson(['addon', 'restore', 'cache', '--backup', result.safety_backup, '--as', 'cache-before']);
  const before = await contents('cache-before');
  assert.equal(before.keys['0:later'], 'after the backup');
  assert.equal(before.keys['2:elsewhere'], 'changed');
  assert.equal(before.keys['0:greeting'], undefined);
});

test('a download is the RDB file itself', async () => {
  const file = join(scratch, 'cache.rdb');
  const result = await daemon.cli(['addon', 'backup', 'download', 'cache', firstBackup, '--output', file], { timeoutMs: 600_000 });
  assert.equal(result.code, 0, result.stderr);
  const start = Buffer.alloc(5);
  const fd = openSync(file, 'r');
  readSync(fd, start, 0, 5, 0);
  closeSync(fd);
  assert.equal(start.toString('latin1'), 'REDIS');
  const checked = spawnSync('redis-check-rdb', [file], { encoding: 'utf8' });
  assert.equal(checked.status, 0, checked.stdout);
  assert.match(checked.stdout, /\[info\] 5 keys read/);
});

test('bytes overwritten in the middle of a snapshot: restores, the download and the restore test fail naming it', async () => {
  const key = `redis/${cacheId}/${firstBackup}.rdb`;
  const object = join(`${daemon.dataDir}-backups`, key);
  const fd = openSync(object, 'r+');
  writeSync(fd, Buffer.from('overwritten'), 0, 11, Math.floor(statSync(object).size / 2));
  closeSync(fd);
  const changed = new RegExp(
    `backup object ${key.replaceAll('.', '\\.')} changed since it was stored: ` +
      '(\\d+) bytes with SHA-256 [0-9a-f]{64} were recorded, \\1 bytes with SHA-256 [0-9a-f]{64} are there now',
  );
  const into = await daemon.cli(['addon', 'restore', 'cache', '--backup', firstBackup, '--as', 'cache-bad']);
  assert.notEqual(into.code, 0);
  assert.match(into.stderr, changed);
  const inPlace = await daemon.cli(['addon', 'restore', 'cache', '--backup', firstBackup, '--yes']);
  assert.notEqual(inPlace.code, 0);
  assert.match(inPlace.stderr, changed);
  assert.deepEqual(await contents('cache'), FIRST, 'the add-on keeps its keys');
  const download = await daemon.cli(['addon', 'backup', 'download', 'cache', firstBackup, '--output', join(scratch, 'bad.rdb')]);
  assert.notEqual(download.code, 0);
  assert.match(download.stderr, changed);

  const verify = await daemon.cli(['addon', 'backup', 'verify', 'cache', firstBackup], { timeoutMs: 600_000 });
  assert.notEqual(verify.code, 0);
  assert.match(verify.stderr, changed);
  assert.equal((await backups())[0]!.id, firstBackup, 'the failed backup is listed first');
  assert.match(daemon.output(), new RegExp(`Backup ${firstBackup} of add-on cache .* FAILED its restore test`));
  const refused = await daemon.cli(['addon', 'restore', 'cache', '--backup', firstBackup, '--as', 'cache-bad']);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /failed its restore test/);
  assert.deepEqual(await contents('cache'), FIRST, 'the add-on serves on');
  assert.ok(!(await addonNames()).includes('cache-bad'), 'the failed restores left no add-on behind');
});

test('--as alone forks the add-on as it is now, through a fresh snapshot; the source is untouched', async () => {
  await redis('cache', ['SET', 'forked-now', 'yes']);
  const before = await contents('cache');
  const forked = await cliJson<{ addon: { name: string }; safety_backup: string | null }>([
    'addon',
    'restore',
    'cache',
    '--as',
    'cache-fork',
  ]);
  assert.equal(forked.addon.name, 'cache-fork');
  assert.deepEqual((await contents('cache-fork')).keys, before.keys, 'every key of the add-on as it was, the last one written included');
  assert.notEqual((await addonEnv('cache-fork')).REDIS_URL, (await addonEnv('cache')).REDIS_URL);
  assert.deepEqual(await contents('cache'), before, 'the source is untouched');
});
