import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServerProcess } from './server-process.js';
import { pidAlive, processState as processStateOf } from '../executor/pid-alive.js';
import { SupervisedServer, type ServerRestart } from './server-supervisor.js';
import { waitUntil } from '../../test/support/wait.js';

// Real processes (`sleep` standing in for a server, run as the test's own user), real signals.

const me = { name: 'self', uid: process.getuid!(), gid: process.getgid!() };

function fixture() {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-supervisor-'));
  const lines: string[] = [];
  const restarts: ServerRestart[] = [];
  const started: ServerProcess[] = [];
  /** How many of the next relaunches fail. */
  let failures = 0;
  const spawn = async () => {
    const server = await ServerProcess.spawn('the test server', { argv: ['sleep', '60'], user: me, cwd: dir, logFile: join(dir, 'log') });
    started.push(server);
    return server;
  };
  const supervise = async (backoff = { initialMs: 50, maxMs: 400, resetAfterMs: 60_000 }) =>
    new SupervisedServer(await spawn(), {
      provider: 'test',
      addonId: 'addon_1',
      label: 'the test server',
      relaunch: async () => {
        if (failures > 0) {
          failures--;
          throw new Error('port taken');
        }
        return spawn();
      },
      events: () => ({ log: (line) => lines.push(line), restarted: (restart) => restarts.push(restart) }),
      backoff,
    });
  const cleanUp = () => {
    for (const server of started) if (pidAlive(server.pid)) process.kill(server.pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  return { lines, restarts, started, supervise, cleanUp, failNext: (n: number) => (failures = n) };
}

test('a server killed with -9 is started again, logged and reported once', async () => {
  const f = fixture();
  try {
    const supervised = await f.supervise();
    const first = supervised.pid;
    process.kill(first, 'SIGKILL');
    await waitUntil('a second process runs', () => f.restarts.length === 1, 5000);
    assert.notEqual(supervised.pid, first);
    assert.ok(pidAlive(supervised.pid));
    assert.equal(supervised.isUp(), true);
    assert.deepEqual(f.restarts, [
      { provider: 'test', addonId: 'addon_1', label: 'the test server', previousExit: 'killed by SIGKILL', pid: supervised.pid },
    ]);
    assert.match(f.lines[0]!, /^The test server killed by SIGKILL \(pid \d+, up \d+\.\d s\); restarting it in 0\.1 s\.$/);
    assert.match(
      f.lines[1]!,
      new RegExp(`^The test server restarted: now pid ${supervised.pid} \\(the previous process killed by SIGKILL\\)\\.$`),
    );
    assert.equal(supervised.restarts, 1);
    await supervised.stop('SIGTERM', 2000);
    assert.equal(pidAlive(supervised.pid), false);
  } finally {
    f.cleanUp();
  }
});

test('a server that keeps dying waits longer each time; a failed relaunch is retried', async () => {
  const f = fixture();
  try {
    const supervised = await f.supervise({ initialMs: 50, maxMs: 1000, resetAfterMs: 60_000 });
    for (let round = 1; round <= 3; round++) {
      process.kill(supervised.pid, 'SIGKILL');
      await waitUntil(`restart ${round}`, () => f.restarts.length === round, 5000);
    }
    const delays = f.lines.map((line) => /restarting it in (\d+\.\d) s/.exec(line)?.[1]).filter((d) => d !== undefined);
    assert.deepEqual(delays, ['0.1', '0.1', '0.2'], 'doubling: 50, 100, 200 ms (printed rounded)');

    f.failNext(1);
    process.kill(supervised.pid, 'SIGKILL');
    await waitUntil('the restart after a failed attempt', () => f.restarts.length === 4, 5000);
    assert.ok(f.lines.some((line) => /^The test server could not be restarted: port taken\. Trying again in 0\.8 s\.$/.test(line)));
    await supervised.stop('SIGTERM', 2000);
  } finally {
    f.cleanUp();
  }
});

test('stop ends the server for good, even while a restart waits', async () => {
  const f = fixture();
  try {
    const supervised = await f.supervise({ initialMs: 300, maxMs: 300, resetAfterMs: 60_000 });
    process.kill(supervised.pid, 'SIGKILL');
    await waitUntil('the crash is seen', () => f.lines.length === 1, 5000);
    await supervised.stop('SIGTERM', 2000);
    await new Promise((resolve) => setTimeout(resolve, 500)); // past the restart's delay: nothing may start
    assert.equal(f.started.length, 1, 'no second process');
    assert.deepEqual(f.restarts, []);
    assert.equal(supervised.isSupervised(), false);
  } finally {
    f.cleanUp();
  }
});

test('detach leaves the server running and restarts nothing after', async () => {
  const f = fixture();
  try {
    const supervised = await f.supervise();
    const pid = supervised.pid;
    supervised.detach();
    assert.equal(pidAlive(pid), true, 'it serves on');
    process.kill(pid, 'SIGKILL');
    await waitUntil('the process is gone', () => !pidAlive(pid), 5000);
    await new Promise((resolve) => setTimeout(resolve, 300)); // several times the restart delay
    assert.equal(f.started.length, 1);
    assert.deepEqual(f.lines, []);
  } finally {
    f.cleanUp();
  }
});

test('an adopted server (not our child) is watched too, and a zombie nobody reaps counts as gone', async () => {
  const f = fixture();
  const dir = mkdtempSync(join(tmpdir(), 'slipway-adopted-'));
  // `sleep 60` is the child of a process that never reaps it (sh replaced by sleep 600): killed,
  // it stays a zombie, as an adopted server does under an init that reaps no orphans.
  const parent = await ServerProcess.spawn('a parent that reaps nothing', {
    argv: ['sh', '-c', `sleep 60 & echo $! > ${dir}/pid; exec sleep 600`],
    user: me,
    cwd: dir,
    logFile: join(dir, 'log'),
  });
  try {
    await waitUntil('the child is started', () => readPid(dir) !== undefined, 5000);
    const adopted = ServerProcess.adopt('the adopted server', readPid(dir)!);
    const supervised = new SupervisedServer(adopted, {
      provider: 'test',
      label: 'the adopted server',
      relaunch: async () => {
        const server = await ServerProcess.spawn('the adopted server', {
          argv: ['sleep', '60'],
          user: me,
          cwd: dir,
          logFile: join(dir, 'log'),
        });
        f.started.push(server);
        return server;
      },
      events: () => ({ log: (line) => f.lines.push(line), restarted: (restart) => f.restarts.push(restart) }),
      backoff: { initialMs: 50 },
    });
    process.kill(adopted.pid, 'SIGKILL');
    await waitUntil('the adopted server is restarted', () => f.restarts.length === 1, 5000);
    assert.equal(processStateOf(adopted.pid), 'Z', 'it is a zombie, which signal 0 still reaches');
    assert.equal(f.restarts[0]!.previousExit, 'ended (exit status unknown)');
    await supervised.stop('SIGTERM', 2000);
  } finally {
    await parent.stop('SIGKILL', 1000);
    f.cleanUp();
    rmSync(dir, { recursive: true, force: true });
  }
});

function readPid(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dir, 'pid'), 'utf8').trim());
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
