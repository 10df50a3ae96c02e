import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDetachedServer } from './start-detached-server.js';

const env = { PATH: '/usr/local/bin:/usr/bin:/bin', LC_ALL: 'C' };

/** The session a process is in (field 6 of /proc/<pid>/stat). */
function sessionOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]);
}

test('a detached server leads its own session, writes its output to the file, and is left running', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-detached-'));
  const logFile = join(dir, 'out.log');
  let pid = 0;
  try {
    pid = await startDetachedServer({ argv: ['sh', '-c', 'echo started; echo oops >&2; exec sleep 30'], cwd: '/', env, logFile });
    assert.equal(sessionOf(pid), pid, 'its own session');
    assert.notEqual(sessionOf(pid), sessionOf(process.pid));
    for (let i = 0; i < 200 && !readFileSync(logFile, 'utf8').includes('oops'); i++) await sleep(10);
    assert.equal(readFileSync(logFile, 'utf8'), 'started\noops\n');
    assert.equal(statSync(logFile).mode & 0o777, 0o600);
  } finally {
    if (pid) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a program that does not exist is refused, naming it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-detached-'));
  try {
    await assert.rejects(
      startDetachedServer({ argv: ['/nonexistent/program'], cwd: '/', env, logFile: join(dir, 'out.log') }),
      /Cannot run "\/nonexistent\/program"/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
