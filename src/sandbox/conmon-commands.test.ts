import { test } from 'node:test';
import assert from 'node:assert/strict';
import { conmonArgv } from './conmon-commands.js';

test('conmon stays in the foreground, runs runc on slipway state folder and keeps every file it writes in the bundle', () => {
  const argv = conmonArgv({ stateDir: '/s', bundle: '/b/i-1', id: 'i-1' });
  assert.equal(argv[0], '/usr/bin/conmon');
  const value = (option: string) => argv[argv.indexOf(option) + 1];
  assert.ok(argv.includes('--sync'), 'no fork into the background: the daemon holds the monitor');
  assert.equal(value('--api-version'), '1');
  assert.equal(value('--runtime'), '/usr/sbin/runc');
  assert.deepEqual(
    argv.flatMap((a, i) => (a === '--runtime-arg' ? [argv[i + 1]] : [])),
    ['--root', '/s'],
  );
  for (const option of ['--cid', '--cuuid', '--name']) assert.equal(value(option), 'i-1');
  for (const option of ['--bundle', '--socket-dir-path']) assert.equal(value(option), '/b/i-1');
  assert.equal(value('--exit-dir'), '/b/i-1/exit');
  assert.equal(value('--container-pidfile'), '/b/i-1/pid');
  assert.equal(value('--log-path'), 'passthrough:', "the sandbox writes to the daemon's pipes itself");
  assert.ok(!argv.includes('--stdin'), 'standard input is handed over, not copied');
});

test('sandbox ids that could be read as options or paths are refused', () => {
  for (const id of ['-x', '../a', 'A', '', 'a/b', 'a b'])
    assert.throws(() => conmonArgv({ stateDir: '/s', bundle: '/b', id }), /Invalid sandbox id/);
});
