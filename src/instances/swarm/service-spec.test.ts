import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serviceSpec, serviceName, nanoCpus, validateOwner } from './service-spec.js';

const input = {
  name: 'sw77-i-abc',
  owner: 'slipway77',
  role: 'instance' as const,
  appId: 'app_1',
  deploymentId: 'dep_1',
  instanceId: 'app_1-dep_1-0',
  image: '127.0.0.1:5000/slipway77/app_1:dep_1',
  command: ['node', 'server.js'],
  env: { PATH: '/usr/bin:/bin', PORT: '8080', ODD: 'a=b; $(x)' },
  workingDir: '/var/lib/slipway/releases/app_1/dep_1',
  sandbox: {
    user: { uid: 2000001, gid: 2000001 },
    limits: { memoryBytes: 512 * 1024 * 1024, pids: 512, cpuShares: 1024 },
    flavor: 'nano',
    readOnlyPaths: [],
  },
  network: 'slipway77-instances',
  restartDelayMs: 1000,
  stopGraceMs: 10_000,
};

test("an instance is one replica with the app user, no capabilities, the task's own writable layer, its limits and exact env", () => {
  const spec = serviceSpec(input) as any;
  const c = spec.TaskTemplate.ContainerSpec;
  assert.equal(c.User, '2000001:2000001');
  assert.deepEqual(c.CapabilityDrop, ['ALL']);
  assert.equal(c.ReadOnly, false, 'the app writes into its folder, in the task alone, as in a local sandbox');
  assert.deepEqual(c.Env, ['PATH=/usr/bin:/bin', 'PORT=8080', 'ODD=a=b; $(x)']);
  assert.deepEqual(c.Command, ['/usr/bin/tini', '--', '/usr/bin/env', '-u', 'HOSTNAME', '--', 'node', 'server.js']);
  assert.equal(c.Dir, input.workingDir);
  assert.deepEqual(c.Mounts, [{ Type: 'tmpfs', Target: '/tmp', TmpfsOptions: { SizeBytes: 128 * 1024 * 1024, Mode: 0o1777 } }]);
  assert.deepEqual(spec.TaskTemplate.Resources.Limits, { MemoryBytes: 512 * 1024 * 1024, Pids: 512, NanoCPUs: 1e9 });
  assert.deepEqual(spec.Mode, { Replicated: { Replicas: 1 } });
  assert.equal(spec.TaskTemplate.RestartPolicy.Condition, 'any');
  assert.deepEqual(spec.TaskTemplate.Networks, [{ Target: 'slipway77-instances' }]);
  assert.equal(spec.Labels['slipway.owner'], 'slipway77');
});

test('a release is one service of N replicas; its own entrypoint runs as given and its slot identity goes in a tmpfs of the task itself, on any node', () => {
  const entry = ['/bin/sh', '-c', 'exec "$@"', 'sh'];
  const spec = serviceSpec({
    ...input,
    instanceId: undefined,
    command: entry,
    entrypoint: true,
    replicas: 3,
    identityMount: '/run/slipway-slot',
  }) as any;
  assert.deepEqual(spec.Mode, { Replicated: { Replicas: 3 } });
  assert.deepEqual(spec.TaskTemplate.ContainerSpec.Command, ['/usr/bin/tini', '--', ...entry]);
  assert.deepEqual(spec.TaskTemplate.ContainerSpec.Mounts.at(-1), {
    Type: 'tmpfs',
    Target: '/run/slipway-slot',
    TmpfsOptions: { SizeBytes: 64 * 1024, Mode: 0o1777 },
  });
  assert.equal(
    spec.TaskTemplate.ContainerSpec.Mounts.some((m: { Type: string }) => m.Type === 'bind'),
    false,
    'nothing of the control machine is mounted: a task on another node has the same mounts',
  );
  assert.equal('slipway.instance' in spec.Labels, false);
});

test('service names fit Docker (63 characters, letters, digits, dashes) whatever the instance id', () => {
  const name = serviceName('slipway77', 'r', 'x'.repeat(300));
  assert.match(name, /^[a-z0-9-]{1,63}$/);
  assert.notEqual(serviceName('slipway77', 'r', 'a', 0), serviceName('slipway77', 'r', 'a', 1));
  assert.throws(() => validateOwner('Bad Owner'), /lowercase/);
});

test('the CPU weight becomes a ceiling of at least a tenth of a CPU', () => {
  assert.equal(nanoCpus(2048), 2e9);
  assert.equal(nanoCpus(10), 1e8);
});
