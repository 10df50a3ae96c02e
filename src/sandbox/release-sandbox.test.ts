/** What a release's processes may write: nothing of the release, only their scratch. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ociConfig } from './oci-config.js';
import { RELEASE_SCRATCH, releaseSandboxSpec } from './release-sandbox.js';
import type { SandboxIdentity } from './sandbox-identity.js';

const SANDBOX: SandboxIdentity = {
  user: { uid: 60_001, gid: 60_001 },
  limits: { memoryBytes: 512 * 1024 * 1024, pids: 256, cpuShares: 512 },
  flavor: 'nano',
  readOnlyPaths: ['/opt/toolchains/node'],
};
const RELEASE = '/data/releases/app_1/deployment_1';

function mountOf(releaseWritable?: boolean) {
  const spec = releaseSandboxSpec({
    releaseDir: RELEASE,
    sandbox: SANDBOX,
    args: ['node', 'server.js'],
    env: {},
    hostname: 'instance',
    networkNamespacePath: '/run/netns/i',
    ...(releaseWritable === undefined ? {} : { releaseWritable }),
  });
  const config = ociConfig({ ...spec, cgroupsPath: 'slipway/app_1/i' });
  return (name: string) => config.mounts.find((m) => m.destination === name);
}

test('the release is bound read-only unless asked otherwise; the scratch is a tmpfs', () => {
  const mount = mountOf();
  assert.deepEqual(mount(RELEASE)?.options, ['rbind', 'ro', 'nosuid', 'nodev']);
  assert.equal(mount(RELEASE_SCRATCH)?.type, 'tmpfs');
  assert.deepEqual(mount('/opt/toolchains/node')?.options, ['rbind', 'ro', 'nosuid', 'nodev']);
  assert.deepEqual(mountOf(false)(RELEASE)?.options, ['rbind', 'ro', 'nosuid', 'nodev']);
  assert.deepEqual(mountOf(true)(RELEASE)?.options, ['rbind', 'rw', 'nosuid', 'nodev']);
});
