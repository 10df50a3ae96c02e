/**
 * A LocalNetnsBackend for tests, on its own bridge, subnet, namespace prefix, app user and cgroup
 * root, so a daemon running on this machine (slw / 10.77.0.0/16) is untouched. Needs root.
 */
import { readFileSync, rmSync } from 'node:fs';
import { mountsUnder } from '../../src/storage/mount-table.js';
import { LocalNetnsBackend, type LocalNetnsBackendOptions } from '../../src/instances/local/local-netns-backend.js';
import { SandboxHost } from '../../src/sandbox/sandbox-host.js';
import { makeAppUser } from './app-user.js';
import type { SandboxIdentity } from '../../src/sandbox/sandbox-identity.js';

export const TEST_BRIDGE = 'slwtest0';
export const TEST_SUBNET = '10.78.0.0/16';
export const TEST_PREFIX = 'slwt';

/** Why the local backend cannot run here, or undefined when it can. */
export function localBackendMissing(): string | undefined {
  return process.getuid?.() !== 0 ? 'needs root (network namespaces, runc, cgroups)' : undefined;
}

/** Names of one test backend's network; each test file that runs one at the same time needs its own. */
export interface TestNetwork {
  bridge: string;
  subnet: string;
  prefix: string;
  cgroupRoot: string;
}

const DEFAULT_NETWORK: TestNetwork = { bridge: TEST_BRIDGE, subnet: TEST_SUBNET, prefix: TEST_PREFIX, cgroupRoot: 'slwtest' };

export async function makeTestLocalBackend(
  network: TestNetwork = DEFAULT_NETWORK,
  options: Pick<LocalNetnsBackendOptions, 'restartBackoff'> = {},
): Promise<{ backend: LocalNetnsBackend; sandbox: SandboxIdentity; cleanup(): Promise<void> }> {
  const appUser = await makeAppUser(`backend-${network.prefix}`);
  const sandbox: SandboxIdentity = {
    user: appUser.user,
    limits: { memoryBytes: 256 * 1024 * 1024, pids: 256, cpuShares: 512 },
    flavor: 'pico',
    readOnlyPaths: [],
  };
  const sandboxes = new SandboxHost({
    bundlesDir: `/run/slipway-test/${network.prefix}/bundles`,
    stateDir: `/run/slipway-test/${network.prefix}/runc`,
    cgroupRoot: network.cgroupRoot,
  });
  await sandboxes.sweep();
  const backend = new LocalNetnsBackend({
    bridgeName: network.bridge,
    subnet: network.subnet,
    namespacePrefix: network.prefix,
    sandboxes,
    ...options,
  });
  await backend.init();
  return {
    backend,
    sandbox,
    cleanup: async () => {
      await backend.stopAll(1000);
      await backend.removeBridge();
      await appUser.remove();
      // The bundles, runc's state and the layers folder beside the bundles (no app filesystem
      // here): nothing of them outlives the test, once nothing is mounted in them.
      const runtime = `/run/slipway-test/${network.prefix}`;
      if (mountsUnder(readFileSync('/proc/self/mountinfo', 'utf8'), runtime).length === 0)
        rmSync(runtime, { recursive: true, force: true });
    },
  };
}
