import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adoptionLabels, readFoundService, withHolders, type AdoptionSpec, type ListedService, type SlotHolder } from './adoption.js';
import { serviceSpec } from './service-spec.js';

const spec: AdoptionSpec = {
  releaseDir: '/var/lib/slipway/releases/app_1/dep_1',
  command: ['node', 'server.js'],
  beforeStart: [['npm', 'run', 'migrate']],
  sandbox: {
    user: { uid: 2000001, gid: 2000001 },
    limits: { memoryBytes: 512 * 1024 * 1024, pids: 512, cpuShares: 1024 },
    flavor: 'nano',
    readOnlyPaths: ['/var/cache/slipway/toolchains/node/24.11.0'],
  },
};

const holder = (n: number): SlotHolder => ({
  instanceId: `instance_${n}`,
  instanceNumber: n,
  vars: { INSTANCE_ID: `instance_${n}`, INSTANCE_NUMBER: String(n) },
});

/** A service as the Engine API lists it, made from the spec the backend creates. */
function listed(
  overrides: { role?: 'instance' | 'worker' | 'run'; adoption?: Record<string, string>; replicas?: number } = {},
): ListedService {
  const created = serviceSpec({
    name: 'slipway77-r-abc',
    owner: 'slipway77',
    role: overrides.role ?? 'instance',
    adoption: overrides.adoption ?? adoptionLabels('key1', 'slipway-0123456789abcdef', spec),
    appId: 'app_1',
    deploymentId: 'dep_1',
    image: '127.0.0.1:5000/slipway77/app_1:dep_1',
    command: ['/bin/sh', '-c', 'script', 'sh'],
    entrypoint: true,
    env: { PATH: '/usr/bin:/bin', ODD: 'a=b; c', SLIPWAY_SLOT: '{{.Task.Slot}}' },
    workingDir: spec.releaseDir,
    sandbox: spec.sandbox,
    network: 'slipway77-instances',
    restartDelayMs: 1000,
    stopGraceMs: 10_000,
    replicas: overrides.replicas ?? 2,
  }) as ListedService['Spec'];
  return { ID: 'svc1', Spec: created };
}

test('a service made by the backend reads back with its release, environment and slot holders', () => {
  const service = listed();
  service.Spec.Labels = withHolders(
    service.Spec.Labels,
    new Map([
      [1, holder(0)],
      [3, holder(1)],
    ]),
  );
  const found = readFoundService(service, 'slipway77');
  assert.ok(found);
  assert.equal(found.role, 'instance');
  assert.equal(found.appId, 'app_1');
  assert.equal(found.deploymentId, 'dep_1');
  assert.equal(found.key, 'key1');
  assert.equal(found.marker, 'slipway-0123456789abcdef');
  assert.deepEqual(found.spec, spec);
  assert.deepEqual(found.env, { PATH: '/usr/bin:/bin', ODD: 'a=b; c' }, 'the slot variable is the backend’s, not the app’s');
  assert.equal(found.user, '2000001:2000001');
  assert.equal(found.replicas, 2);
  assert.deepEqual(
    [...found.holders],
    [
      [1, holder(0)],
      [3, holder(1)],
    ],
  );
});

test('slot labels are replaced as a whole, the other labels kept', () => {
  const first = withHolders({ 'slipway.owner': 'o', 'slipway.slot.1': '{}', 'slipway.slot.2': '{}' }, new Map([[2, holder(5)]]));
  assert.deepEqual(first, { 'slipway.owner': 'o', 'slipway.slot.2': JSON.stringify(holder(5)) });
  assert.deepEqual(withHolders(first, new Map()), { 'slipway.owner': 'o' });
});

test('what cannot be adopted is not read: one-off jobs, other owners, services without or with broken labels', () => {
  assert.equal(readFoundService(listed({ role: 'run' }), 'slipway77'), undefined);
  assert.equal(readFoundService(listed(), 'slipway78'), undefined);
  assert.equal(readFoundService(listed({ adoption: {} }), 'slipway77'), undefined, 'a service of a daemon before adoption');
  const broken = listed();
  broken.Spec.Labels!['slipway.spec'] = '{"releaseDir": 3}';
  assert.equal(readFoundService(broken, 'slipway77'), undefined);
  const notJson = listed();
  notJson.Spec.Labels!['slipway.spec'] = '{';
  assert.equal(readFoundService(notJson, 'slipway77'), undefined);
  // A worker service without its process, or an instance service with one, is not what it says.
  assert.equal(readFoundService(listed({ role: 'worker' }), 'slipway77'), undefined);
});

test('an unreadable slot label leaves that slot without a holder (its replica is stopped), the others read', () => {
  const service = listed();
  service.Spec.Labels = {
    ...withHolders(service.Spec.Labels, new Map([[2, holder(1)]])),
    'slipway.slot.1': '{"instanceId": 7}',
    'slipway.slot.x': JSON.stringify(holder(3)),
  };
  assert.deepEqual([...readFoundService(service, 'slipway77')!.holders], [[2, holder(1)]]);
});

test('a worker service reads back with its process', () => {
  const worker = { name: 'worker', command: ['node', 'worker.js'], restart: 'on-failure' as const, restartDelayMs: 500 };
  const found = readFoundService(
    listed({ role: 'worker', adoption: adoptionLabels('key2', 'slipway-0123456789abcdef', { ...spec, worker }) }),
    'slipway77',
  );
  assert.deepEqual(found?.spec.worker, worker);
});
