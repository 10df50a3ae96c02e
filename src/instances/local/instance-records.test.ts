import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InstanceRecords } from './instance-records.js';
import type { InstanceSpec } from '../backend.js';

const spec = (instanceId: string, instanceNumber: number): InstanceSpec => ({
  appId: 'app_1',
  deploymentId: 'deployment_1',
  instanceId,
  instanceNumber,
  releaseDir: '/r',
  beforeStart: [],
  command: ['node', 'server.js'],
  env: { A: '1' },
  sandbox: { user: { uid: 1, gid: 1 }, limits: { memoryBytes: 1, pids: 1 } as never, flavor: 'XS', readOnlyPaths: [] },
  onLog: () => undefined,
});
const network = (slot: number) => ({
  slot,
  namespace: `ns${slot}`,
  hostVeth: 'h',
  peerVeth: 'p',
  address: `10.0.0.${slot}`,
  prefixLength: 16,
  gateway: '10.0.0.1',
  bridge: 'b',
});

test('records keep what adoption needs, without the callbacks, newest first; unreadable ones are dropped', () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-records-'));
  const records = new InstanceRecords(dir);
  records.write(spec('instance_old', 0), network(5));
  records.write(spec('instance_new', 0), network(6));
  utimesSync(join(dir, 'instance_old.json'), new Date(1000), new Date(1000));
  writeFileSync(join(dir, 'broken.json'), '{not json');
  writeFileSync(join(dir, '..hidden'), 'x');
  const found = records.all();
  assert.deepEqual(
    found.map((r) => [r.spec.instanceId, r.network.slot]),
    [
      ['instance_new', 6],
      ['instance_old', 5],
    ],
  );
  assert.equal('onLog' in found[0]!.spec, false, 'callbacks are not written down');
  assert.deepEqual(found[0]!.spec.env, { A: '1' });
  assert.deepEqual(readdirSync(dir).sort(), ['instance_new.json', 'instance_old.json']);
  records.remove('instance_old');
  assert.deepEqual(
    records.all().map((r) => r.spec.instanceId),
    ['instance_new'],
  );
});
