import { test } from 'node:test';
import assert from 'node:assert/strict';
import { taskUsage } from './swarm-services.js';

test("a container's stats give its memory and its CPU time with when Docker read them", () => {
  assert.deepEqual(
    taskUsage({
      read: '2026-11-29T06:00:02.5Z',
      memory_stats: { usage: 52_428_800 },
      cpu_stats: { cpu_usage: { total_usage: 3_250_000_000 } },
    }),
    { memory: 52_428_800, cpu: { seconds: 3.25, at: Date.parse('2026-11-29T06:00:02.5Z') } },
  );
  // A stopped container's stats have neither.
  assert.deepEqual(taskUsage({ read: '0001-01-01T00:00:00Z', memory_stats: {}, cpu_stats: {} }), {});
  assert.deepEqual(taskUsage({ cpu_stats: { cpu_usage: { total_usage: 1 } } }), {}, 'no time, no reading');
});
