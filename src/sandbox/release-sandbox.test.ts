import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bucketMounts, releaseSandboxSpec } from './release-sandbox.js';
import type { SandboxIdentity } from './sandbox-identity.js';

const identity: SandboxIdentity = {
  user: { uid: 2000001, gid: 2000001 },
  limits: { memoryBytes: 512 * 1024 * 1024, pids: 256, cpuShares: 1024, cpuWeight: 100 },
  flavor: 'S',
  readOnlyPaths: ['/var/cache/toolchains'],
};
const release = '/data/apps/app_1/releases/deployment_1';
const base = {
  appId: 'app_1',
  releaseDir: release,
  args: ['node', 'server.js'],
  env: {},
  hostname: 'web',
  networkNamespacePath: '/run/netns/n1',
};

test("a release's sandbox binds each bucket at its path in the release's folder and holds each bucket group once", () => {
  const spec = releaseSandboxSpec({
    ...base,
    sandbox: {
      ...identity,
      buckets: [
        { path: 'uploads', source: '/data/fs-buckets/addon_a', gid: 2400001 },
        { path: 'var/index', source: '/data/fs-buckets/addon_b', gid: 2400002 },
        { path: 'cache', source: '/data/fs-buckets/addon_a', gid: 2400001 },
      ],
    },
  });
  assert.deepEqual(spec.sharedFolders, [
    { destination: `${release}/uploads`, source: '/data/fs-buckets/addon_a', writable: true },
    { destination: `${release}/var/index`, source: '/data/fs-buckets/addon_b', writable: true },
    { destination: `${release}/cache`, source: '/data/fs-buckets/addon_a', writable: true },
  ]);
  assert.deepEqual(spec.groups, [2400001, 2400002]);
});

test('without buckets nothing is added, and a path that is not plain and relative is refused', () => {
  const spec = releaseSandboxSpec({ ...base, sandbox: identity });
  assert.equal(spec.sharedFolders, undefined);
  assert.equal(spec.groups, undefined);
  for (const path of ['', '/etc', '../x', 'a/../../etc', 'a//b', '.']) {
    assert.throws(() => bucketMounts(release, [{ path, source: '/data/fs-buckets/a', gid: 2400001 }]), /plain relative path/, path);
  }
});
