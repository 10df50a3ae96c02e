import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deleteArgv, killArgv, listArgv, runArgv, startArgv } from './runc-commands.js';

test('runc calls are argv arrays on slipway state folder', () => {
  assert.deepEqual(runArgv('/s', '/b/i-1', 'i-1'), [
    '/usr/sbin/runc',
    '--root',
    '/s',
    'run',
    '--no-new-keyring',
    '--bundle',
    '/b/i-1',
    'i-1',
  ]);
  assert.deepEqual(startArgv('/s', 'i-1'), ['/usr/sbin/runc', '--root', '/s', 'start', 'i-1']);
  assert.deepEqual(killArgv('/s', 'i-1', 'TERM'), ['/usr/sbin/runc', '--root', '/s', 'kill', 'i-1', 'TERM']);
  assert.deepEqual(deleteArgv('/s', 'i-1'), ['/usr/sbin/runc', '--root', '/s', 'delete', '--force', 'i-1']);
  assert.deepEqual(listArgv('/s'), ['/usr/sbin/runc', '--root', '/s', 'list', '--quiet']);
});

test('sandbox ids that could be read as options or paths are refused', () => {
  for (const id of ['-x', '../a', 'A', '', 'a/b', 'a b']) assert.throws(() => runArgv('/s', '/b', id), /Invalid sandbox id/);
});
