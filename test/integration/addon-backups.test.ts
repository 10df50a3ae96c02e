/**
 * PostgreSQL add-on backups through the CLI of a real daemon: a backup is taken and restored
 * into a throw-away copy before it counts as verified; a restore to a second between two writes
 * brings back exactly the first rows, into a new add-on or in place (a safety backup first,
 * same credentials); bad input is refused saying what to do and changes nothing; a backup
 * downloads as a dump pg_restore reads; bytes overwritten in the middle of a stored base backup
 * make every restore, the download and the restore test fail naming the object before anything
 * is touched (it is counted and listed first).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { createApp } from '../support/deploy.js';
import { freePort } from '../support/free-port.js';
import { backupsOf, cliJson as cliJsonOf, type ListedBackup, postgresUriOf, restoreTested, sql } from '../support/addon-cli.js';

type Backup = ListedBackup;

let daemon: TestDaemon;
let metricsPort: number;
let uri: string;
let appId: string;
const scratch = mkdtempSync(join(tmpdir(), 'slipway-backups-'));

const cliJson = <T>(args: string[]) => cliJsonOf<T>(daemon, args);
const uriOf = (addon: string) => postgresUriOf(daemon, addon);

const notes = async (url: string) => (await sql<{ v: string }>(url, 'SELECT v FROM notes ORDER BY id')).map((r) => r.v);

const backups = (addon = 'db'): Promise<Backup[]> => backupsOf(daemon, addon);
const settled = (id: string): Promise<Backup> => restoreTested(daemon, 'db', id);

async function verificationCount(result: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const match = new RegExp(`^slipway_backup_verifications_total\\{provider="postgresql",result="${result}"\\} (\\d+)$`, 'm').exec(text);
  return match ? Number(match[1]) : Number.NaN;
}

let firstBackup: string;
let between: string;

before(async () => {
  metricsPort = await freePort();
  daemon = await startDaemon(['--metrics-listen', `127.0.0.1:${metricsPort}`]);
  appId = await createApp(daemon, mkdtempSync(join(scratch, 'app-')), 'shop');
  await cliJson(['addon', 'create', 'postgresql', 'db', '--link', appId]);
  uri = await uriOf('db');
});

after(async () => {
  if (daemon) {
    await daemon.stop();
    rmSync(`${daemon.dataDir}-backups`, { recursive: true, force: true });
  }
  rmSync(scratch, { recursive: true, force: true });
});

test('a backup is stored, then restore-tested before it counts as verified', async () => {
  assert.equal(await verificationCount('verified'), 0, 'the series is there before the first verification');
  await sql(uri, 'CREATE TABLE notes (id serial PRIMARY KEY, v text NOT NULL)');
  for (const v of ['first-1', 'first-2', 'first-3']) await sql(uri, 'INSERT INTO notes (v) VALUES ($1)', [v]);
  const taken = await daemon.cli(['addon', 'backup', 'db'], { timeoutMs: 600_000 });
  assert.equal(taken.code, 0, taken.stderr);
  firstBackup = taken.stdout.trim();
  assert.match(firstBackup, /^backup_[0-9a-z]+$/);
  const backup = await settled(firstBackup);
  assert.equal(backup.verification, 'verified', backup.verification_detail);
  assert.match(
    backup.verification_detail,
    /^\d+ stored objects match their SHA-256; every file of the base backup matches its manifest; restored and started; pg_amcheck found no corruption; 1 table, 3 rows as counted$/,
  );
  assert.ok(backup.size_bytes > 1_000_000, `a base backup of the cluster has some size (${backup.size_bytes})`);
  assert.equal(await verificationCount('verified'), 1);
  const human = await daemon.cli(['addon', 'backups', 'db']);
  assert.match(human.stdout, new RegExp(`${firstBackup}.*manual.*verified`));
  assert.match(human.stderr, /Restorable to any second from .* to now\. Daily backup at 03:00, kept 7 days\./);
});

test('a restore to a second between two writes brings back the first rows into a new add-on', async () => {
  await new Promise((r) => setTimeout(r, 1100));
  between = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 1100));
  for (const v of ['second-1', 'second-2']) await sql(uri, 'INSERT INTO notes (v) VALUES ($1)', [v]);
  await sql(uri, `DELETE FROM notes WHERE v = 'first-2'`);
  const restored = await cliJson<{ addon: { name: string; id: string } }>(['addon', 'restore', 'db', '--to', between, '--as', 'db-then']);
  assert.equal(restored.addon.name, 'db-then');
  const thenUri = await uriOf('db-then');
  assert.notEqual(thenUri, uri, 'a new add-on has credentials of its own');
  assert.deepEqual(await notes(thenUri), ['first-1', 'first-2', 'first-3']);
  assert.deepEqual(await notes(uri), ['first-1', 'first-3', 'second-1', 'second-2'], 'the source is untouched');
});

test('bad input is refused saying what to do, and changes nothing', async () => {
  const early = await daemon.cli(['addon', 'restore', 'db', '--to', '2001-01-01T00:00:00Z', '--as', 'db-early']);
  assert.notEqual(early.code, 0);
  assert.match(early.stderr, /2001-01-01T00:00:00\.000Z is outside the restore window of db: \d{4}-.* to now/);
  const unknown = await daemon.cli(['addon', 'restore', 'db', '--backup', 'backup_nope', '--yes']);
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.stderr, new RegExp(`no backup "backup_nope"[\\s\\S]*Its backups: .*${firstBackup}`));
  const unasked = await daemon.cli(['addon', 'restore', 'db', '--to', between]);
  assert.notEqual(unasked.code, 0);
  assert.match(unasked.stderr, /Replace the data of "db"[\s\S]*Pass --yes/);
  const notATime = await daemon.cli(['addon', 'restore', 'db', '--to', 'yesterday', '--as', 'db-x']);
  assert.match(notATime.stderr, /Field "to" must be a time such as/);
  assert.deepEqual(await notes(uri), ['first-1', 'first-3', 'second-1', 'second-2']);
  const names = (await cliJson<Array<{ name: string }>>(['addon', 'list'])).map((a) => a.name).sort();
  assert.deepEqual(names, ['db', 'db-then'], 'no add-on was left behind by the refused restores');
});

test('a restore in place keeps the credentials and takes a safety backup first', async () => {
  const linkedLog = (await daemon.cli(['logs', '--app', appId, '--no-follow'])).stdout;
  const result = await cliJson<{ addon: { id: string }; safety_backup: string }>(['addon', 'restore', 'db', '--to', between, '--yes']);
  assert.match(result.safety_backup, /^backup_/);
  assert.deepEqual(await notes(uri), ['first-1', 'first-2', 'first-3'], 'the same URI reads the restored rows');
  const safety = (await backups()).find((b) => b.id === result.safety_backup);
  assert.equal(safety?.kind, 'safety');
  const after = (await daemon.cli(['logs', '--app', appId, '--no-follow'])).stdout;
  assert.ok(after.length > linkedLog.length);
  assert.match(after, /The add-on db is being restored to .*: its connections end meanwhile/);
  assert.match(after, /The add-on db was restored to /);
  // The safety backup holds what was there before: restored into a new add-on, it has the later rows.
  assert.equal((await settled(result.safety_backup)).verification, 'verified');
  await cliJson(['addon', 'restore', 'db', '--backup', result.safety_backup, '--as', 'db-before']);
  assert.deepEqual(await notes(await uriOf('db-before')), ['first-1', 'first-3', 'second-1', 'second-2']);
});

test('--as alone forks the add-on as it is now: its rows, its own server and credentials; the source untouched', async () => {
  const backupsBefore = (await backupsOf(daemon, 'db')).length;
  await sql(uri, `INSERT INTO notes (v) VALUES ('just-written')`);
  const forked = await cliJson<{ addon: { name: string; id: string }; safety_backup: string | null }>([
    'addon',
    'restore',
    'db',
    '--as',
    'db-fork',
  ]);
  assert.equal(forked.safety_backup, null);
  const forkUri = await uriOf('db-fork');
  assert.deepEqual(await notes(forkUri), [...(await notes(uri))], 'the fork has every row, the last one written included');
  assert.notEqual(new URL(forkUri).port, new URL(uri).port, 'a server of its own');
  assert.notEqual(new URL(forkUri).username, new URL(uri).username, 'credentials of its own');
  await sql(forkUri, `INSERT INTO notes (v) VALUES ('fork-only')`);
  assert.ok(!(await notes(uri)).includes('fork-only'), 'the source is untouched by writes to the fork');
  assert.equal((await backupsOf(daemon, 'db')).length, backupsBefore, 'no backup was needed');
  // Alone, without --as, there is nothing to restore to.
  const inPlace = await daemon.cli(['addon', 'restore', 'db', '--yes']);
  assert.notEqual(inPlace.code, 0);
  assert.match(inPlace.stderr, /Give either --backup <id> or --to <time>, or only --as <new-name>/);
});

test('a backup downloads as a dump pg_restore reads', async () => {
  const file = join(scratch, 'db.dump');
  const result = await daemon.cli(['addon', 'backup', 'download', 'db', firstBackup, '--output', file], { timeoutMs: 600_000 });
  assert.equal(result.code, 0, result.stderr);
  const listed = spawnSync('/usr/lib/postgresql/15/bin/pg_restore', ['--list', file], { encoding: 'utf8' });
  assert.equal(listed.status, 0, listed.stderr);
  assert.match(listed.stdout, /TABLE DATA public notes/);
});

/**
 * Where, in a base backup's tar, the content of a file of template1 (base/1/) nearest the middle
 * of the archive starts, and its size: bytes changed there are in the middle of the object, and
 * nothing a restore of the add-on's database reads (neither WAL replay nor pg_amcheck of it).
 */
function template1FileNearMiddle(tar: Buffer): { name: string; offset: number; size: number } {
  const files: Array<{ name: string; offset: number; size: number }> = [];
  for (let at = 0; at + 512 <= tar.length; ) {
    const name = tar.toString('latin1', at, at + 100).replace(/\0.*$/s, '');
    if (name === '') break;
    const size = Number.parseInt(
      tar
        .toString('latin1', at + 124, at + 136)
        .replace(/\0.*$/s, '')
        .trim() || '0',
      8,
    );
    const type = tar.toString('latin1', at + 156, at + 157);
    if ((type === '0' || type === '\0') && name.startsWith('base/1/') && size >= 8192) files.push({ name, offset: at + 512, size });
    at += 512 + Math.ceil(size / 512) * 512;
  }
  assert.ok(files.length > 0, 'the base backup holds the files of template1');
  return files.sort((a, b) => Math.abs(a.offset - tar.length / 2) - Math.abs(b.offset - tar.length / 2))[0]!;
}

test('bytes overwritten in the middle of a base backup: restores, download and verify fail naming it, the add-on untouched', async () => {
  const rows = await notes(uri);
  const store = `${daemon.dataDir}-backups`;
  // Base backups are `.tar` objects in a `base/` folder under postgresql/ (the cluster's, or one per add-on server).
  const bases = (readdirSync(join(store, 'postgresql'), { recursive: true }) as string[])
    .filter((path) => path.endsWith('.tar') && path.split('/').at(-2) === 'base')
    .map((path) => `postgresql/${path}`);
  assert.ok(bases.length >= 1, 'the base backups are in the backup folder');
  // The base backup the first backup rests on: its oldest.
  const key = bases.sort((a, b) => statSync(join(store, a)).mtimeMs - statSync(join(store, b)).mtimeMs)[0]!;
  const path = join(store, key);
  const file = template1FileNearMiddle(readFileSync(path));
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.alloc(16, 0x5a), 0, 16, file.offset + Math.floor(file.size / 2));
  closeSync(fd);
  const changed = new RegExp(
    `backup object ${key.replaceAll('.', '\\.')} changed since it was stored: ` +
      '(\\d+) bytes with SHA-256 [0-9a-f]{64} were recorded, \\1 bytes with SHA-256 [0-9a-f]{64} are there now',
  );

  const into = await daemon.cli(['addon', 'restore', 'db', '--backup', firstBackup, '--as', 'db-bad'], { timeoutMs: 600_000 });
  assert.notEqual(into.code, 0);
  assert.match(into.stderr, changed);
  const inPlace = await daemon.cli(['addon', 'restore', 'db', '--backup', firstBackup, '--yes'], { timeoutMs: 600_000 });
  assert.notEqual(inPlace.code, 0);
  assert.match(inPlace.stderr, changed);
  assert.match(inPlace.stderr, /Nothing was changed/);
  assert.deepEqual(await notes(uri), rows, 'the add-on keeps its data');
  const download = await daemon.cli(['addon', 'backup', 'download', 'db', firstBackup, '--output', join(scratch, 'bad.dump')], {
    timeoutMs: 600_000,
  });
  assert.notEqual(download.code, 0);
  assert.match(download.stderr, changed);

  const failedBefore = await verificationCount('failed');
  const verify = await daemon.cli(['addon', 'backup', 'verify', 'db', firstBackup], { timeoutMs: 600_000 });
  assert.notEqual(verify.code, 0);
  assert.match(verify.stderr, /failed its restore test: backup object/);
  assert.match(verify.stderr, changed);
  assert.equal(await verificationCount('failed'), failedBefore + 1);
  assert.equal((await backups())[0]!.id, firstBackup, 'the failed backup is listed first');
  assert.match(daemon.output(), new RegExp(`Backup ${firstBackup} of add-on db .* FAILED its restore test`));
  assert.deepEqual(await notes(uri), rows, 'the add-on serves on');
  const names = (await cliJson<Array<{ name: string }>>(['addon', 'list'])).map((a) => a.name).sort();
  assert.ok(!names.includes('db-bad'), 'the failed restore left no add-on behind');
});
