/**
 * The instance network as the daemon sets it up (LocalNetnsBackend: its bridge, its gateway
 * address, a namespace per sandbox), for tests that need add-on servers on the gateway and a
 * sandbox's view of them without a whole daemon. Needs root.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { SandboxHost } from '../../src/sandbox/sandbox-host.js';
import { LocalNetnsBackend, type SandboxNetworkEvents } from '../../src/instances/local/local-netns-backend.js';

export interface TestSandboxNetwork {
  address: string;
  /** Runs a host program inside the sandbox's namespace (as root, with a minimal PATH). */
  exec(argv: string[], env?: Record<string, string>): string;
  release(): Promise<void>;
}

export interface TestInstanceNetwork {
  backend: LocalNetnsBackend;
  gateway: string;
  subnet: string;
  bridge: string;
  /** A namespace of the product's own on the bridge, as a build of `appId` gets. */
  sandbox(appId: string): Promise<TestSandboxNetwork>;
  /**
   * Plugs a sandbox in and out again, so the bridge has no port and no carrier, as after a
   * `kill -9` of the daemon.
   */
  leaveWithoutPort(): Promise<void>;
  remove(): Promise<void>;
}

/**
 * A bridge `slipway<letter><digits>` on a /24 of 10.79.0.0/16, both drawn at random so that
 * runs of the same test at the same time on one machine do not meet.
 */
export async function startInstanceNetwork(letter: string, events?: SandboxNetworkEvents): Promise<TestInstanceNetwork> {
  const name = `${letter}${1000 + Math.floor(Math.random() * 9000)}`;
  const subnet = `10.79.${1 + Math.floor(Math.random() * 254)}.0/24`;
  const stateDir = mkdtempSync(join(tmpdir(), 'slipway-test-network-'));
  const sandboxes = new SandboxHost({
    bundlesDir: join(stateDir, 'bundles'),
    stateDir: join(stateDir, 'runc'),
    cgroupRoot: `slipway${name}`,
  });
  const bridge = `slipway${name}`;
  const backend = new LocalNetnsBackend({ bridgeName: bridge, namespacePrefix: name, subnet, sandboxes, networkEvents: events });
  await backend.init();
  const sandbox = async (appId: string): Promise<TestSandboxNetwork> => {
    const network = await backend.acquireBuildNetwork(appId);
    const namespace = basename(network.namespacePath);
    return {
      address: network.address,
      exec: (argv, env) =>
        execFileSync('ip', ['netns', 'exec', namespace, ...argv], {
          encoding: 'utf8',
          env: { PATH: '/usr/bin:/bin', ...env },
          timeout: 15_000,
        }),
      release: network.release,
    };
  };
  return {
    backend,
    gateway: backend.gatewayAddress,
    subnet: backend.subnet,
    bridge,
    sandbox,
    leaveWithoutPort: async () => {
      await (await sandbox('carrier-probe')).release();
      // The kernel reports the carrier change a moment later (link events are batched).
      const deadline = Date.now() + 5_000;
      while (!hasNoCarrier(bridge)) {
        if (Date.now() > deadline) throw new Error(`${bridge} still has carrier with no port`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    remove: async () => {
      await backend.removeBridge().catch(() => undefined);
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

function hasNoCarrier(link: string): boolean {
  const [info] = JSON.parse(execFileSync('ip', ['-j', 'link', 'show', 'dev', link], { encoding: 'utf8' })) as Array<{ flags: string[] }>;
  return info!.flags.includes('NO-CARRIER');
}
