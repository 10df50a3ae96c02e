import assert from 'node:assert/strict';
import test from 'node:test';
import { DEFAULT_PLAN_LIMITS } from '../plan-limits.js';
import { describeServerSizing, serverSettings, serverSizing } from './server-settings.js';

const MiB = 1024 * 1024;

test('the default plan sizes a small server', () => {
  assert.deepEqual(serverSizing(DEFAULT_PLAN_LIMITS.postgresql), {
    sharedBuffersKb: 32 * 1024,
    maxConnections: 10,
    workMemKb: 6553,
    maintenanceWorkMemKb: 16 * 1024,
    effectiveCacheSizeKb: 128 * 1024,
  });
  assert.equal(
    describeServerSizing(DEFAULT_PLAN_LIMITS.postgresql),
    'shared_buffers 32 MiB, max_connections 10, work_mem 6 MiB, maintenance_work_mem 16 MiB',
  );
});

test('the settings follow the plan: twice the memory, twice the buffers; more connections, less work_mem each', () => {
  const big = serverSizing({ ...DEFAULT_PLAN_LIMITS.postgresql, memoryBytes: 512 * MiB, connectionLimit: 20 });
  assert.equal(big.sharedBuffersKb, 64 * 1024);
  assert.equal(big.maxConnections, 25);
  assert.equal(big.workMemKb, Math.floor((512 * 1024) / 4 / 25));
  const settings = serverSettings({ ...DEFAULT_PLAN_LIMITS.postgresql, memoryBytes: 64 * MiB });
  assert.ok(settings.includes('shared_buffers=8192kB'));
  assert.ok(settings.includes('max_connections=10'));
  assert.ok(
    settings.every((s) => /^[a-z_]+=[^\s]+$/.test(s)),
    'one name=value each, nothing a shell would split',
  );
});
