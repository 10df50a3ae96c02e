import { test } from 'node:test';
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backoffDelay } from '../../executor/restart-backoff.js';
import {
  describeExit,
  exitLine,
  liveSupervisor,
  processStartTime,
  readExits,
  RESTART_BACKOFF,
  writeSupervisorRecord,
} from './supervisor-files.js';

test('deaths are read from the offset reached, whole lines only, and from the start of a file that was replaced', () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-exits-'));
  try {
    const path = join(dir, 'exits.jsonl');
    assert.deepEqual(readExits(path, 0), { exits: [], offset: 0 }, 'no file yet');
    const first = exitLine({ time: new Date('2026-01-01T00:00:00Z'), pid: 10, exitCode: null, signal: 'SIGKILL' });
    writeFileSync(path, first);
    const read = readExits(path, 0);
    assert.equal(read.exits.length, 1);
    assert.deepEqual(read.exits[0], { time: new Date('2026-01-01T00:00:00Z'), pid: 10, exitCode: null, signal: 'SIGKILL' });
    assert.equal(read.offset, Buffer.byteLength(first));
    // A line being written is left for the next read.
    appendFileSync(path, '{"time":"2026-01-01T00:00:01Z","pid":11,"exitCode":1,');
    assert.deepEqual(readExits(path, read.offset), { exits: [], offset: read.offset });
    appendFileSync(path, '"signal":null}\nnot json\n');
    const next = readExits(path, read.offset);
    assert.deepEqual(
      next.exits.map((e) => [e.pid, e.exitCode]),
      [[11, 1]],
    );
    // A fresh start wiped the record: an offset past its end starts from 0.
    writeFileSync(path, first);
    assert.equal(readExits(path, next.offset).exits.length, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a supervisor is found only while that very process runs for that folder: a recycled pid is not taken', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-supervisor-'));
  // A stand-in supervisor: a process whose first argument is the folder, as the real one's is.
  const standIn = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', dir], { stdio: 'ignore' });
  try {
    await new Promise((resolve) => standIn.once('spawn', resolve));
    const pid = standIn.pid!;
    const path = join(dir, 'supervisor.pid');
    assert.equal(liveSupervisor(path), undefined, 'no file');
    const startTime = processStartTime(pid)!;
    assert.match(startTime, /^\d+$/);
    writeSupervisorRecord(path, { pid, startTime });
    assert.deepEqual(liveSupervisor(path), { pid, startTime });
    // The same pid, started at another time: a recycled pid.
    writeSupervisorRecord(path, { pid, startTime: String(Number(startTime) + 1) });
    assert.equal(liveSupervisor(path), undefined);
    // A live process that supervises another folder (this test's own process).
    writeSupervisorRecord(path, { pid: process.pid, startTime: processStartTime(process.pid)! });
    assert.equal(liveSupervisor(path), undefined);
    writeFileSync(path, 'garbage');
    assert.equal(liveSupervisor(path), undefined);
  } finally {
    standIn.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a HAProxy dying right after each start is started again with a growing pause, the first time at once', () => {
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 6, 9].map((n) => backoffDelay(n, RESTART_BACKOFF)),
    [0, 0, 250, 500, 1000, 2000, 4000, 5000],
  );
});

test('a death reads as what happened and that the router serves again', () => {
  const time = new Date('2026-01-01T00:00:00Z');
  assert.equal(
    describeExit({ time, pid: 7, exitCode: null, signal: 'SIGKILL' }),
    "The router's HAProxy (pid 7) was killed by SIGKILL at 2026-01-01T00:00:00.000Z; its supervisor started it again.",
  );
  assert.match(describeExit({ time, pid: 7, exitCode: 1, signal: null }), /exited with code 1/);
  assert.match(describeExit({ time, pid: 0, exitCode: null, signal: null }), /HAProxy could not be started/);
});
