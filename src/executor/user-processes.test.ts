import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processesOfUser } from './user-processes.js';

/** A /proc of three processes: the uid as real, as filesystem (after setfsuid) and not at all. */
function fakeProc(): string {
  const proc = mkdtempSync(join(tmpdir(), 'proc-'));
  const status = (uids: string) => `Name:\tsleep\nUid:\t${uids}\nGid:\t1\t1\t1\t1\n`;
  for (const [pid, uids] of [
    ['10', '2000001\t2000001\t2000001\t2000001'],
    ['11', '0\t0\t0\t2000001'],
    ['12', '2000002\t2000002\t2000002\t2000002'],
  ] as const) {
    mkdirSync(join(proc, pid));
    writeFileSync(join(proc, pid, 'status'), status(uids));
  }
  mkdirSync(join(proc, 'self'));
  return proc;
}

test('the processes of a uid are those holding it as any of their four uids', () => {
  const proc = fakeProc();
  assert.deepEqual(processesOfUser(2_000_001, proc).sort(), [10, 11]);
  assert.deepEqual(processesOfUser(2_000_002, proc), [12]);
  assert.deepEqual(processesOfUser(2_000_003, proc), []);
});

test('root and malformed uids are refused: only an app user is looked for', () => {
  assert.throws(() => processesOfUser(0), /Not an unprivileged uid/);
  assert.throws(() => processesOfUser(1.5), /Not an unprivileged uid/);
});
