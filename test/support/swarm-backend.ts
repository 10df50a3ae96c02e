/**
 * A SwarmBackend for tests, with an owner name, network and app user of its own, so a daemon
 * using the swarm on this machine is untouched. Needs root and a Docker node that is a swarm
 * manager with a registry (scripts/swarm-setup.sh, run by ./dev setup, makes both).
 */
import { SwarmBackend } from '../../src/instances/swarm/swarm-backend.js';
import { DockerApi } from '../../src/instances/swarm/docker-api.js';
import { checkSwarmManager } from '../../src/instances/swarm/swarm-checks.js';
import { makeAppUser } from './app-user.js';
import type { SandboxIdentity } from '../../src/sandbox/sandbox-identity.js';

export const TEST_REGISTRY = process.env.SLIPWAY_TEST_REGISTRY ?? '127.0.0.1:5000';

/** Why the swarm backend cannot run here, or undefined when it can. */
export async function swarmBackendMissing(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'needs root (the Docker socket, app users)';
  try {
    await checkSwarmManager(new DockerApi());
    return undefined;
  } catch (error) {
    return `no Docker swarm manager on this machine: ${(error as Error).message}`;
  }
}

export async function makeTestSwarmBackend(names: {
  owner: string;
  subnet: string;
}): Promise<{ backend: SwarmBackend; sandbox: SandboxIdentity; cleanup(): Promise<void> }> {
  const appUser = await makeAppUser(`swarm-${names.owner}`);
  const sandbox: SandboxIdentity = {
    user: appUser.user,
    limits: { memoryBytes: 256 * 1024 * 1024, pids: 256, cpuShares: 512 },
    flavor: 'pico',
    readOnlyPaths: [],
  };
  const backend = new SwarmBackend({
    api: new DockerApi(),
    registry: TEST_REGISTRY,
    owner: names.owner,
    subnet: names.subnet,
    log: (line) => console.log(`# ${line}`),
  });
  await backend.init();
  return {
    backend,
    sandbox,
    cleanup: async () => {
      await backend.stopAll(1000);
      await backend.removeNetwork();
      await appUser.remove();
    },
  };
}
