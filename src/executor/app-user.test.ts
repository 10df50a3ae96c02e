import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lookupUser, useraddArgv } from './app-user.js';

test('useradd argv asks for a system user without shell or home', () => {
  assert.deepEqual(useraddArgv('x', 'what it is for'), [
    'useradd',
    '--system',
    '--user-group',
    '--no-create-home',
    '--home-dir',
    '/nonexistent',
    '--shell',
    '/usr/sbin/nologin',
    '--comment',
    'what it is for',
    'x',
  ]);
});

test('a user is looked up through NSS; a missing one is undefined', async () => {
  assert.deepEqual(await lookupUser('root'), { uid: 0, gid: 0, name: 'root' });
  assert.equal(await lookupUser('slipway-no-such-user'), undefined);
});

test('a name that is not a plain user name is refused before getent runs', async () => {
  for (const bad of ['', 'Root', '-rf', 'a b', 'x;id', 'a'.repeat(40), '../x']) {
    await assert.rejects(lookupUser(bad), /Invalid user name/);
  }
});
