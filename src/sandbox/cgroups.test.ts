import { test } from 'node:test';
import assert from 'node:assert/strict';
import { limitWrites, sharesToWeight } from './cgroups.js';

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
