import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CommandFailedError, daemonEnv, runCaptured, runChecked } from './run-captured.js';

const ENV = { PATH: '/usr/bin:/bin' };

test('the output comes back byte for byte, each stream apart, with the exit code', async () => {
  const r = await runCaptured({ argv: ['sh', '-c', 'printf "a\\r\\nb"; printf "oops\\n" >&2; exit 3'], cwd: '/', env: ENV });
  assert.deepEqual([r.exitCode, r.stdout, r.stderr], [3, 'a\r\nb', 'oops\n']);
});

test('input is written to the standard input, then closed', async () => {
  const r = await runCaptured({ argv: ['cat'], cwd: '/', env: ENV, input: 'flush ruleset\nline two' });
  assert.equal(r.stdout, 'flush ruleset\nline two');
  assert.equal(r.exitCode, 0);
});

test('a command past its time limit is killed with its whole group', async () => {
  const r = await runCaptured({ argv: ['sh', '-c', 'sleep 30 & echo started; wait'], cwd: '/', env: ENV, timeoutMs: 300 });
  assert.equal(r.timedOut, true);
  assert.equal(r.stdout, 'started\n');
});

test('what is kept of a stream is bounded', async () => {
  const r = await runCaptured({ argv: ['head', '-c', '100000', '/dev/zero'], cwd: '/', env: ENV, maxOutputBytes: 1000 });
  assert.equal(r.stdout.length, 1000);
});

test('a program that does not exist rejects, saying which', async () => {
  await assert.rejects(runCaptured({ argv: ['slipway-no-such-tool'], cwd: '/', env: ENV }), /Cannot run "slipway-no-such-tool"/);
});

test('daemonEnv is the daemon environment without unset names, plus what is given', () => {
  const env = daemonEnv({ EXTRA: '1' });
  assert.equal(env.EXTRA, '1');
  assert.equal(env.PATH, process.env.PATH);
  assert.ok(Object.values(env).every((v) => typeof v === 'string'));
});

test('runChecked returns the output of a command that succeeds and rejects with it otherwise', async () => {
  assert.equal((await runChecked(['sh', '-c', 'echo fine'], { env: ENV })).stdout, 'fine\n');
  await assert.rejects(runChecked(['sh', '-c', 'echo broke >&2; exit 2'], { env: ENV }), (error: unknown) => {
    assert.ok(error instanceof CommandFailedError);
    assert.equal(error.stderr, 'broke\n');
    assert.equal(error.result.exitCode, 2);
    assert.match(error.message, /exited with code 2: broke/);
    return true;
  });
  await assert.rejects(runChecked(['sleep', '5'], { env: ENV, timeoutMs: 200 }), /was stopped after its time limit/);
});

test("keepTerminal leaves the command in the caller's session; otherwise it gets one of its own", async () => {
  const sessionOf = async (keepTerminal: boolean) =>
    (await runCaptured({ argv: ['sh', '-c', 'ps -o sid= -p $$'], cwd: '/', env: ENV, keepTerminal })).stdout.trim();
  const mine = (await runCaptured({ argv: ['ps', '-o', 'sid=', '-p', String(process.pid)], cwd: '/', env: ENV })).stdout.trim();
  assert.equal(await sessionOf(true), mine);
  assert.notEqual(await sessionOf(false), mine);
});
