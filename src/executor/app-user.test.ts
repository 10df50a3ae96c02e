import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ensureAppUser, lookupUser, useraddArgv } from './app-user.js';
import { runCommand } from './run-command.js';

const NAME = 'slipway-test-user';
const sysEnv = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };

async function removeUser() {
  await runCommand({ argv: ['userdel', NAME], cwd: '/', env: sysEnv });
}

after(removeUser);

test('useradd argv asks for a system user without shell or home', () => {
  assert.deepEqual(useraddArgv('x').slice(0, 8), [
    'useradd',
    '--system',
    '--user-group',
    '--no-create-home',
    '--home-dir',
    '/nonexistent',
    '--shell',
    '/usr/sbin/nologin',
  ]);
  assert.equal(useraddArgv('x').at(-1), 'x');
});

test('rejects names that are not plain user names', async () => {
  for (const bad of ['', 'Root', '-rf', 'a b', 'x;id', 'a'.repeat(40), '../x']) {
    await assert.rejects(ensureAppUser(bad), /Invalid app user name/);
  }
});

test('refuses a user with uid 0', { skip: process.getuid?.() !== 0 && 'needs root' }, async () => {
  await assert.rejects(ensureAppUser('root'), /must not run as root/);
});

test('creates the user once, concurrently and idempotently', { skip: process.getuid?.() !== 0 && 'needs root' }, async () => {
  await removeUser();
  assert.equal(await lookupUser(NAME), undefined);
  const results = await Promise.all([ensureAppUser(NAME), ensureAppUser(NAME), ensureAppUser(NAME)]);
  const again = await ensureAppUser(NAME);
  for (const r of [...results, again]) assert.deepEqual(r, results[0]);
  assert.notEqual(results[0]!.uid, 0);
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${NAME}:`));
  assert.ok(line, 'user is in /etc/passwd');
  assert.equal(line.split(':')[6], '/usr/sbin/nologin');
});

test('a second process racing useradd settles on the same user', { skip: process.getuid?.() !== 0 && 'needs root' }, async () => {
  await removeUser();
  // Another process creates it between our lookup and our useradd: simulate by running both at once.
  const [a, b] = await Promise.all([runCommand({ argv: useraddArgv(NAME), cwd: '/', env: sysEnv }), ensureAppUser(NAME)]);
  assert.ok(a.exitCode === 0 || a.exitCode === 9, `useradd exited ${a.exitCode}`);
  assert.deepEqual(await lookupUser(NAME), b);
});
