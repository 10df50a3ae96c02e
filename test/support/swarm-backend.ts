/**
 * A SwarmBackend for tests, with an owner name, network and app user of its own, so a daemon
 * using the swarm on this machine is untouched. Needs root and a Docker node that is a swarm
 * manager with a registry (scripts/swarm-setup.sh, run by ./dev setup, makes both).
 */
import { SwarmBackend } from '../../src/instances/swarm/swarm-backend.js';
import { DockerApi } from '../../src/instances/swarm/docker-api.js';
import { checkSwarmManager } from '../../src/instances/swarm/swarm-checks.js';
import { checkedRegistry } from '../../src/instances/swarm/start.js';
import {
  DEFAULT_REGISTRY_PASSWORD_FILE,
  DEFAULT_REGISTRY_USER,
  dockerCaFile,
  type RegistryAccess,
} from '../../src/instances/swarm/registry.js';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
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

/**
 * The registry scripts/swarm-setup.sh made, reached as the daemon reaches it by default: TLS
 * from the CA the Docker engine trusts, the user and password setup wrote.
 */
export function testRegistry(): Promise<RegistryAccess> {
  return checkedRegistry({ dockerSocket: '/var/run/docker.sock', registry: TEST_REGISTRY, subnet: '' });
}

/**
 * A /16 for a test's swarm tasks that no Docker network and no route of this machine uses: a run
 * killed earlier may have left its tasks' network behind (it outlives the daemon by design), and
 * Docker refuses a second network over the same addresses. The first free of a fixed list: not
 * 172.17-172.21, which a fresh Docker node (the second node's) takes for its own bridges, nor 172.26
 * (the second node's link) or 172.31 (the daemon's default).
 */
export async function freeSwarmSubnet(): Promise<string> {
  const networks = await new DockerApi().json<Array<{ IPAM?: { Config?: Array<{ Subnet?: string }> | null } }>>({
    path: '/networks',
    what: 'list networks',
  });
  const used = new Set(networks.flatMap((n) => (n.IPAM?.Config ?? []).map((c) => c.Subnet?.split('.').slice(0, 2).join('.'))));
  const routes = spawnSync('ip', ['-4', 'route', 'show'], { encoding: 'utf8' }).stdout;
  const candidates = [28, 27, 29, 30, 25, 24, 23, 22].map((n) => `172.${n}`);
  const free = candidates.find((prefix) => !used.has(prefix) && !routes.includes(`${prefix}.`));
  if (!free) throw new Error(`No /16 of ${candidates.join(', ')} is free of Docker networks and routes.`);
  return `${free}.0.0/16`;
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
    registry: await testRegistry(),
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

/**
 * A GET to the test registry as an outsider or as the daemon: over TLS with the CA setup made
 * (`ca: false`: trusting only the system's CAs), with the setup's credential when `credential`.
 */
export function registryGet(path: string, o: { credential: boolean; ca?: boolean }): Promise<{ status: number; body: string }> {
  const [host, port] = TEST_REGISTRY.split(':');
  const headers: Record<string, string> = {};
  if (o.credential) {
    const password = readFileSync(DEFAULT_REGISTRY_PASSWORD_FILE, 'utf8').trim();
    headers.authorization = `Basic ${Buffer.from(`${DEFAULT_REGISTRY_USER}:${password}`).toString('base64')}`;
  }
  return new Promise((resolve, reject) => {
    https
      .get(
        {
          host,
          port: Number(port),
          path,
          headers,
          ca: o.ca === false ? undefined : readFileSync(dockerCaFile(TEST_REGISTRY)),
          agent: false,
        },
        (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      )
      .on('error', reject);
  });
}

/** The same over plain HTTP, with the credential: what a registry without TLS would serve. */
export function registryGetPlain(path: string): Promise<{ status: number; body: string }> {
  const [host, port] = TEST_REGISTRY.split(':');
  return new Promise((resolve, reject) => {
    http
      .get({ host, port: Number(port), path, agent: false }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}
