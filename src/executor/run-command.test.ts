import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from './run-command.js';
import { pidAlive } from './pid-alive.js';
import { makeAppUser } from '../../test/support/app-user.js';
import { waitUntil } from '../../test/support/wait.js';

const env = { PATH: '/usr/local/bin:/usr/bin:/bin', LC_ALL: 'C' };

function collect() {
  const lines: { stream: 'out' | 'err'; line: string }[] = [];
  return { lines, onLine: (stream: 'out' | 'err', line: string) => lines.push({ stream, line }) };
}

/** Whether the process ends (a zombie waiting for its reaper counts: it holds nothing) within `ms`. */
function diesWithin(pid: number, ms: number): Promise<boolean> {
  return waitUntil(`process ${pid} to end`, () => !pidAlive(pid), ms).then(
    () => true,
    () => false,
  );
}

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'slipway-run-'));
  chmodSync(dir, 0o755);
});
after(() => rmSync(dir, { recursive: true, force: true }));

test('arguments reach the program verbatim, never through a shell', async () => {
  const c = collect();
  const hostile = ['a; echo pwned', '$(id)', '`id`', '$HOME', 'it\'s "quoted"', '*', ''];
  const r = await runCommand({ argv: ['printf', '[%s]\\n', ...hostile], cwd: dir, env, onLine: c.onLine });
  assert.equal(r.exitCode, 0);
  assert.deepEqual(
    c.lines.map((l) => l.line),
    hostile.map((h) => `[${h}]`),
  );
});

test('stdout and stderr arrive as separate line streams, \\r ends a line, the last partial line is kept', async () => {
  const c = collect();
  const script = "process.stdout.write('a\\r\\nb\\rc\\n'); process.stderr.write('warn\\n'); process.stdout.write('tail')";
  const r = await runCommand({ argv: [process.execPath, '-e', script], cwd: dir, env, onLine: c.onLine });
  assert.equal(r.exitCode, 0);
  assert.deepEqual(
    c.lines.filter((l) => l.stream === 'out').map((l) => l.line),
    ['a', 'b', 'c', 'tail'],
  );
  assert.deepEqual(
    c.lines.filter((l) => l.stream === 'err').map((l) => l.line),
    ['warn'],
  );
});

test('reports exit codes and signals', async () => {
  const r = await runCommand({ argv: ['sh', '-c', 'exit 7'], cwd: dir, env });
  assert.equal(r.exitCode, 7);
  assert.equal(r.signal, null);
  assert.ok(r.durationMs >= 0);
  const k = await runCommand({ argv: ['sh', '-c', 'kill -TERM $$'], cwd: dir, env });
  assert.equal(k.exitCode, null);
  assert.equal(k.signal, 'SIGTERM');
});

test('the environment is exactly the given one and cwd is applied', async () => {
  const c = collect();
  const r = await runCommand({ argv: ['sh', '-c', 'env; pwd'], cwd: dir, env: { ...env, ONLY_THIS: 'yes' }, onLine: c.onLine });
  assert.equal(r.exitCode, 0);
  const lines = c.lines.map((l) => l.line);
  assert.ok(lines.includes('ONLY_THIS=yes'));
  assert.ok(!lines.some((l) => l.startsWith('HOME=')), 'HOME of the daemon must not leak in');
  assert.equal(lines.at(-1), dir);
});

test('a missing program rejects with an explanation', async () => {
  await assert.rejects(runCommand({ argv: ['no-such-program-here'], cwd: dir, env }), /Cannot run "no-such-program-here".*ENOENT/);
  await assert.rejects(runCommand({ argv: [], cwd: dir, env }), /empty command/);
});

test('timeout kills the whole process group, grandchildren included', async () => {
  const c = collect();
  // The shell starts a background sleep and prints its pid, then waits: both must die.
  const r = await runCommand({
    argv: ['sh', '-c', 'sleep 30 & echo $!; wait'],
    cwd: dir,
    env,
    onLine: c.onLine,
    timeoutMs: 500,
  });
  assert.equal(r.timedOut, true);
  assert.equal(r.signal, 'SIGKILL');
  assert.ok(r.durationMs < 5000, `took ${r.durationMs} ms`);
  const sleeper = Number(c.lines[0]?.line);
  assert.ok(sleeper > 0);
  // SIGKILL reaches the grandchild when it next runs: on a busy machine that can be just after
  // its shell's end was reported. Left out of the group, it would live its 30 s.
  assert.equal(await diesWithin(sleeper, 5000), true, 'the background sleep survived the timeout');
});

test('abort kills the group', async () => {
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 300);
  const r = await runCommand({ argv: ['sleep', '30'], cwd: dir, env, signal: ac.signal });
  assert.equal(r.aborted, true);
  assert.equal(r.signal, 'SIGKILL');
});

test('background helpers left by a finished command do not survive it', async () => {
  const c = collect();
  const r = await runCommand({ argv: ['sh', '-c', 'sleep 30 >/dev/null 2>&1 & echo $!'], cwd: dir, env, onLine: c.onLine });
  assert.equal(r.exitCode, 0);
  const sleeper = Number(c.lines[0]?.line);
  assert.ok(sleeper > 0);
  assert.equal(await diesWithin(sleeper, 5000), true, 'the background sleep outlived its command');
});

test('runs as the given user with no supplementary groups', { skip: process.getuid?.() !== 0 && 'needs root' }, async (t) => {
  // An app's own user, made as the daemon makes one.
  const { user, remove } = await makeAppUser('run-as');
  t.after(remove);
  const c = collect();
  const r = await runCommand({
    argv: ['sh', '-c', 'id -u; id -g; grep ^Groups: /proc/self/status'],
    cwd: dir,
    env,
    user,
    onLine: c.onLine,
  });
  assert.equal(r.exitCode, 0, JSON.stringify(c.lines));
  const [uid, gid, groups] = c.lines.map((l) => l.line);
  assert.equal(Number(uid), user.uid);
  assert.equal(Number(gid), user.gid);
  assert.notEqual(Number(uid), 0);
  assert.match(groups ?? '', /^Groups:\s*$/);
});
