import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxCgroups, limitWrites, sharesToWeight } from './cgroups.js';

const limits = { memoryBytes: 256 * 1024 * 1024, pids: 512, cpuShares: 1024 };

test('cgroup v1 limits go to the memory, pids and cpu hierarchies, swap included', () => {
  assert.deepEqual(limitWrites('v1', limits), [
    { controller: 'memory', file: 'memory.limit_in_bytes', value: '268435456' },
    { controller: 'memory', file: 'memory.memsw.limit_in_bytes', value: '268435456' },
    { controller: 'pids', file: 'pids.max', value: '512' },
    { controller: 'cpu', file: 'cpu.shares', value: '1024' },
  ]);
});

test('cgroup v2 limits go to the one hierarchy, with no swap and a cpu weight', () => {
  assert.deepEqual(limitWrites('v2', limits), [
    { controller: '', file: 'memory.max', value: '268435456' },
    { controller: '', file: 'memory.swap.max', value: '0' },
    { controller: '', file: 'pids.max', value: '512' },
    { controller: '', file: 'cpu.weight', value: String(sharesToWeight(1024)) },
  ]);
});

test('cpu shares map onto cpu.weight keeping their order and range', () => {
  assert.equal(sharesToWeight(2), 1);
  assert.equal(sharesToWeight(262144), 10000);
  assert.ok(sharesToWeight(256) < sharesToWeight(512));
  assert.ok(sharesToWeight(512) < sharesToWeight(4096));
});

test('a weight given for cgroup v2 is written as it is', () => {
  assert.deepEqual(limitWrites('v2', { ...limits, cpuWeight: 25 }).at(-1), { controller: '', file: 'cpu.weight', value: '25' });
});

test('a running group is given a new CPU share and read its CPU time (v1 layout, on a folder standing for the mount)', () => {
  const mount = mkdtempSync(join(tmpdir(), 'slipway-cgroups-'));
  const groups = new SandboxCgroups('slipway-test', mount);
  assert.equal(groups.layout, 'v1');
  mkdirSync(join(mount, 'cpu', 'slipway-test', 'app-1'), { recursive: true });
  mkdirSync(join(mount, 'cpuacct', 'slipway-test', 'app-1'), { recursive: true });
  assert.equal(groups.cpuSeconds('app-1'), undefined, 'nothing to read yet');
  writeFileSync(join(mount, 'cpuacct', 'slipway-test', 'app-1', 'cpuacct.usage'), '2500000000\n');
  assert.equal(groups.cpuSeconds('app-1'), 2.5);
  assert.equal(groups.setCpuShare('app-1', 2048, 200), true);
  assert.equal(readFileSync(join(mount, 'cpu', 'slipway-test', 'app-1', 'cpu.shares'), 'utf8'), '2048');
  assert.equal(groups.setCpuShare('gone', 2048, 200), false, 'a group that no longer exists is not created');

  // The working set: the use less the inactive file cache; the use alone where memory.stat is missing.
  const memory = join(mount, 'memory', 'slipway-test', 'app-1');
  mkdirSync(memory, { recursive: true });
  writeFileSync(join(memory, 'memory.usage_in_bytes'), '300000000\n');
  assert.equal(groups.memoryWorkingSet('app-1'), 300_000_000);
  writeFileSync(join(memory, 'memory.stat'), 'cache 250000000\ninactive_file 9\ntotal_inactive_file 200000000\n');
  assert.equal(groups.memoryWorkingSet('app-1'), 100_000_000);
});
