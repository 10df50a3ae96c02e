import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { launchDetached } from './launch-detached.js';
import { startAttachedServer } from './start-attached.js';

const env = { PATH: '/usr/local/bin:/usr/bin:/bin', LC_ALL: 'C' };

function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** The session a process is in (field 6 of /proc/<pid>/stat). */
function sessionOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]);
}

test('an attached server is read while it serves, gets signals alone, and reports how it ended', async () => {
  const lines: string[] = [];
  // The shell is the server: it answers SIGUSR1 on stderr, and SIGTERM ends it with code 3.
  const script = 'trap "echo usr1 >&2" USR1; trap "exit 3" TERM; echo ready >&2; while :; do sleep 0.05; done';
  const server = await startAttachedServer({
    argv: ['sh', '-c', script],
    cwd: '/',
    env,
    onLine: (stream, line) => lines.push(`${stream}:${line}`),
  });
  assert.equal(server.exitStatus(), undefined);
  assert.equal(sessionOf(server.pid), server.pid, 'the server leads a session of its own');
  while (!lines.includes('err:ready')) await sleep(10);
  assert.equal(server.signal('SIGUSR1'), true);
  while (!lines.includes('err:usr1')) await sleep(10);
  server.signal('SIGTERM');
  assert.deepEqual(await server.exited, { exitCode: 3, signal: null });
  assert.deepEqual(server.exitStatus(), { exitCode: 3, signal: null });
  assert.equal(server.signal('SIGTERM'), false, 'no signal once it has exited');
});

test('an attached server dies with its parent, even one killed by SIGKILL', async () => {
  // A stand-in daemon: a node process that starts the server, prints its pid, and is then killed.
  const daemon = `
    const { startAttachedServer } = await import(${JSON.stringify(new URL('./start-attached.ts', import.meta.url).href)});
    const s = await startAttachedServer({ argv: ['sleep', '60'], cwd: '/', env: ${JSON.stringify(env)} });
    console.log(s.pid);
    setInterval(() => {}, 1000);`;
  const { spawnProcessGroup } = await import('./process-group.js');
  let pid = 0;
  const parent = await spawnProcessGroup({
    argv: [process.execPath, '--import', 'tsx', '--input-type=module', '-e', daemon],
    cwd: process.cwd(),
    env: { ...env, PATH: process.env.PATH ?? env.PATH },
    onLine: (stream, line) => stream === 'out' && (pid = Number(line)),
  });
  while (!pid) await sleep(10);
  assert.equal(alive(pid), true);
  process.kill(parent.pid, 'SIGKILL'); // the parent alone: the server is in a session of its own
  await parent.done;
  const deadline = Date.now() + 5000;
  while (alive(pid) && Date.now() < deadline) await sleep(20);
  assert.equal(alive(pid), false, 'the server outlived the daemon that started it');
});

test('a missing server program ends it at once, saying which', async () => {
  const lines: string[] = [];
  const server = await startAttachedServer({ argv: ['no-such-server-here'], cwd: '/', env, onLine: (_stream, line) => lines.push(line) });
  // setpriv itself starts; it cannot run the program and says so on stderr.
  const exit = await server.exited;
  assert.notEqual(exit.exitCode, 0);
  assert.match(lines.join('\n'), /no-such-server-here/);
});

test('a detached launch reports a quick exit, and leaves a slow program running in its own session', async () => {
  assert.deepEqual(await launchDetached({ argv: ['sh', '-c', 'exit 4'], cwd: '/', env, settleMs: 5000 }), {
    state: 'exited',
    exitCode: 4,
    signal: null,
  });
  const slow = await launchDetached({ argv: ['sleep', '30'], cwd: '/', env, settleMs: 200 });
  assert.equal(slow.state, 'running');
  if (slow.state !== 'running') return;
  try {
    assert.equal(alive(slow.pid), true);
    assert.equal(sessionOf(slow.pid), slow.pid);
  } finally {
    process.kill(slow.pid, 'SIGKILL');
  }
  await assert.rejects(
    launchDetached({ argv: ['no-such-launcher-here'], cwd: '/', env, settleMs: 100 }),
    /Cannot run "no-such-launcher-here".*ENOENT/,
  );
});
