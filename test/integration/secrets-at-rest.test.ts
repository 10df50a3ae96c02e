/**
 * Secrets are not lying around, through a real daemon and its CLI: the first start names the
 * admin token's file and never prints the token; variables, exposed config, a webhook's URL and
 * secret and an add-on's password are sealed in the SQLite file (read here byte by byte); one
 * command rotates the key and a restart still serves every value; a daemon without its key, or
 * with another, refuses to start; a backup object put in another's place is refused at restore;
 * an encrypted platform backup holds none of them in clear and comes back with its key.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';

const scratch = mkdtempSync(join(tmpdir(), 'slipway-secrets-'));
const backupKeyFile = join(scratch, 'backup-key');
const platformBackups = join(scratch, 'platform-backups');
let daemon: TestDaemon;
let restored: TestDaemon | undefined;
let daemonStopped = false;
let dir: string;
let appId: string;
/** Every secret the store was given, to look for in its files. */
const secrets: Record<string, string> = {
  variable: `var-${randomBytes(8).toString('hex')}`,
  exposed: `exposed-${randomBytes(8).toString('hex')}`,
  hookToken: `hooktoken${randomBytes(8).toString('hex')}`,
};

async function cliOk(d: TestDaemon, args: string[], options: { cwd?: string } = {}): Promise<string> {
  const result = await d.cli(args, { ...options, timeoutMs: 300_000 });
  assert.equal(result.code, 0, `slipway ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}\ndaemon: ${d.output().slice(-3000)}`);
  return result.stdout;
}

/** The store's files as bytes (the database and its write-ahead log), as anyone copying them would get. */
function storeBytes(d: TestDaemon): Buffer {
  const files = ['slipway.db', 'slipway.db-wal'].map((f) => join(d.dataDir, f)).filter((f) => existsSync(f));
  return Buffer.concat(files.map((f) => readFileSync(f)));
}

function assertNoSecretIn(bytes: Buffer, where: string): void {
  for (const [what, value] of Object.entries(secrets)) {
    assert.equal(bytes.indexOf(value), -1, `the ${what} is not in clear in ${where}`);
  }
}

function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

before(async () => {
  writeFileSync(backupKeyFile, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  // The webhook's receiver is never reached (no event is sent): its range is opened so its URL is accepted.
  daemon = await startDaemon(['--backup-key-file', backupKeyFile, '--egress-allow', '192.168.233.0/24']);
  dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'vault', { API_SECRET: secrets.variable! });
});

after(async () => {
  for (const d of [restored, daemon]) {
    if (!d) continue;
    if (d !== daemon || !daemonStopped) await d.stop();
    rmSync(`${d.dataDir}-backups`, { recursive: true, force: true });
    rmSync(`${d.dataDir}.secrets-key`, { force: true });
  }
  rmSync(scratch, { recursive: true, force: true });
});

test('the first start says where the admin token is and how to read it, never the token', () => {
  const output = daemon.output();
  assert.equal(output.indexOf(daemon.adminToken), -1, 'the token is not in the daemon output');
  const tokenFile = join(daemon.dataDir, 'admin-token');
  assert.ok(output.includes(`admin token written to ${tokenFile} (mode 0600); read it with: sudo cat ${tokenFile}`), output);
  assert.equal(statSync(`${daemon.dataDir}.secrets-key`).mode & 0o777, 0o600, 'the secrets key beside the data folder is root’s alone');
});

test('variables, exposed config, webhook URL and secret and add-on passwords are sealed in the SQLite file', async () => {
  await cliOk(daemon, ['published-config', 'set', 'EXPOSED_KEY', secrets.exposed!], { cwd: dir });
  await cliOk(daemon, ['addon', 'create', 'redis', 'cache', '--link', appId]);
  const addonEnv = JSON.parse(await cliOk(daemon, ['addon', 'env', 'cache', '--format', 'json'])) as Array<{ name: string; value: string }>;
  secrets.redisPassword = addonEnv.find((v) => v.name === 'REDIS_PASSWORD')!.value;
  assert.ok(secrets.redisPassword.length >= 16);
  const hookUrl = `http://192.168.233.7:9/hook?token=${secrets.hookToken}`;
  secrets.webhookSecret = (await cliOk(daemon, ['webhooks', 'add', 'ci', hookUrl], { cwd: dir })).trim();
  assert.match(secrets.webhookSecret, /\S{16,}/);

  assertNoSecretIn(storeBytes(daemon), 'the store');
  // Served in clear to whom may read them, all the same.
  assert.match(await cliOk(daemon, ['env', '--app', appId]), new RegExp(`API_SECRET=.*${secrets.variable}`));
  assert.match(await cliOk(daemon, ['published-config', '--app', appId]), new RegExp(secrets.exposed!));
});

test('one command rotates the key; after a restart every value is still served', async () => {
  const keyFile = `${daemon.dataDir}.secrets-key`;
  const before = readFileSync(keyFile);
  const rotation = JSON.parse(await cliOk(daemon, ['system', 'rotate-secrets-key', '--format', 'json'])) as {
    key_file: string;
    old_key_id: string;
    new_key_id: string;
    resealed: number;
  };
  assert.equal(rotation.key_file, keyFile);
  assert.notEqual(rotation.new_key_id, rotation.old_key_id);
  assert.ok(rotation.resealed >= 5, `every value re-sealed: ${rotation.resealed}`);
  assert.ok(!readFileSync(keyFile).equals(before), 'the key file holds the new key');
  assert.equal(existsSync(`${keyFile}.new`), false);
  assert.match(await cliOk(daemon, ['env', '--app', appId]), new RegExp(secrets.variable!), 'served at once with the new key');

  await daemon.terminate();
  await daemon.restart();
  assert.match(await cliOk(daemon, ['env', '--app', appId]), new RegExp(`API_SECRET=.*${secrets.variable}`));
  const addonEnv = await cliOk(daemon, ['addon', 'env', 'cache']);
  assert.ok(addonEnv.includes(secrets.redisPassword!), 'the add-on password is read back');
  assert.match(await cliOk(daemon, ['webhooks', '--app', appId]), /\bci\b/);
  assertNoSecretIn(storeBytes(daemon), 'the store after the rotation');
});

test('a daemon whose secrets key is missing, or another key, refuses to start and says why', async () => {
  const keyFile = `${daemon.dataDir}.secrets-key`;
  await daemon.terminate();
  renameSync(keyFile, `${keyFile}.kept`);
  await assert.rejects(daemon.restart(), (e: Error) => {
    assert.match(e.message, /holds sealed secrets .* and their key file .*secrets-key is missing/);
    return true;
  });
  assert.equal(existsSync(keyFile), false, 'no new key was made over the sealed secrets');
  writeFileSync(keyFile, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  await assert.rejects(daemon.restart(), /is not the one the store's secrets were sealed with/);
  renameSync(`${keyFile}.kept`, keyFile);
  await daemon.restart();
  assert.match(await cliOk(daemon, ['env', '--app', appId]), new RegExp(secrets.variable!));
});

test('a backup object put in the place of another is refused at restore', async () => {
  const first = (await cliOk(daemon, ['addon', 'backup', 'cache'])).trim();
  const second = (await cliOk(daemon, ['addon', 'backup', 'cache'])).trim();
  await waitUntil(
    'both backups to be restore-tested',
    async () => {
      const listed = JSON.parse(await cliOk(daemon, ['addon', 'backups', 'cache', '--format', 'json'])) as Array<{
        id: string;
        verification: string;
      }>;
      return [first, second].every((id) => listed.find((b) => b.id === id)?.verification === 'verified') || undefined;
    },
    120_000,
  );
  const objects = filesUnder(join(`${daemon.dataDir}-backups`, 'redis'));
  const objectOf = (id: string) => objects.find((f) => f.endsWith(`/${id}.rdb`))!;
  assert.ok(objectOf(first) && objectOf(second), `both snapshots are in the backup folder: ${objects.join(', ')}`);
  // Someone with write access to the backup store replays the older snapshot under the newer name.
  copyFileSync(objectOf(first), objectOf(second));
  const refused = await daemon.cli(['addon', 'restore', 'cache', '--backup', second, '--yes'], { timeoutMs: 300_000 });
  assert.notEqual(refused.code, 0, refused.stdout);
  const key = objectOf(second).slice(`${daemon.dataDir}-backups/`.length);
  assert.match(refused.stderr, new RegExp(`backup object ${key} was not written under this name: refusing to restore it`));
});

test('an encrypted platform backup holds no secret in clear, and comes back with its key', async () => {
  const result = await daemon.cli(['system', 'backup', '--to', platformBackups, '--format', 'json'], { timeoutMs: 600_000 });
  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(result.stderr, /written in clear/);
  const report = JSON.parse(result.stdout) as { path: string; encrypted: boolean; warning: string | null };
  assert.deepEqual([report.encrypted, report.warning], [true, null]);
  const manifest = JSON.parse(readFileSync(join(report.path, 'manifest.json'), 'utf8')) as { encrypted: { key_id: string } | null };
  assert.match(manifest.encrypted?.key_id ?? '', /^[0-9a-f]{16}$/);
  const secretKey = readFileSync(`${daemon.dataDir}.secrets-key`, 'utf8').trim();
  for (const file of filesUnder(report.path)) {
    const bytes = readFileSync(file);
    assertNoSecretIn(bytes, file);
    assert.equal(bytes.indexOf(daemon.adminToken), -1, `the admin token is not in clear in ${file}`);
    assert.equal(bytes.indexOf(secretKey), -1, `the secrets key is not in clear in ${file}`);
    assert.equal(bytes.indexOf('PRIVATE KEY'), -1, `no private key in clear in ${file}`);
  }
  await daemon.stop();
  daemonStopped = true;

  // Without the key the restore is refused before anything is written; with it the platform is back.
  const refused = await startDaemon(['--restore-from', report.path], { emptyDataFolder: true }).then(
    (d) => d.stop().then(() => 'started'),
    (e: Error) => e.message,
  );
  assert.match(refused, /This platform backup is encrypted \(key id [0-9a-f]{16}\): give the key file it was written with/);
  restored = await startDaemon(['--restore-from', report.path, '--backup-key-file', backupKeyFile], { emptyDataFolder: true });
  assert.equal(restored.adminToken, daemon.adminToken);
  assert.match(await cliOk(restored, ['env', '--app', appId]), new RegExp(`API_SECRET=.*${secrets.variable}`));
  assertNoSecretIn(storeBytes(restored), 'the restored store');
});
