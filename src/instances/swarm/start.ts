import { Firewall } from '../../network/firewall.js';
import type { SandboxNetworkEvents } from '../local/local-netns-backend.js';
import { join } from 'node:path';
import { parseBucketServerAddress } from './bucket-server-config.js';
import { DockerApi } from './docker-api.js';
import { SwarmBackend } from './swarm-backend.js';
import { DEFAULT_REGISTRY_PASSWORD_FILE, DEFAULT_REGISTRY_USER, RegistryAccess, dockerCaFile } from './registry.js';

/**
 * What the daemon calls to run instances on Docker Swarm (`slipway server --backend swarm`):
 * the firewall of the tasks' bridge, then the backend. Everything Swarm-specific stays here.
 */
export interface SwarmOptions {
  /** The Docker API of a swarm manager (default /var/run/docker.sock). */
  dockerSocket: string;
  /** host:port of the registry every node pulls release images from (default 127.0.0.1:5000). */
  registry: string;
  /** The registry's user (default `slipway`, the one scripts/swarm-setup.sh makes). */
  registryUser?: string;
  /** A root-only file holding the registry's password (default /etc/slipway/registry-password). */
  registryPasswordFile?: string;
  /** The CA of the registry's TLS certificate (default the Docker engine's, /etc/docker/certs.d/<registry>/ca.crt). */
  registryCaFile?: string;
  /** The tasks' network, a /16 no node uses otherwise (default 172.31.0.0/16). */
  subnet: string;
  /** The address of this machine where the nodes mount FS buckets from (GlusterFS); without it, apps naming buckets do not start. */
  bucketServer?: string;
}

import { DEFAULT_REGISTRY, DEFAULT_SWARM_SUBNET } from './swarm-defaults.js';

export function swarmOptions(given: SwarmOptions | undefined): SwarmOptions {
  return given ?? { dockerSocket: '/var/run/docker.sock', registry: DEFAULT_REGISTRY, subnet: DEFAULT_SWARM_SUBNET };
}

/**
 * The registry as the daemon reaches it, checked: over TLS, taking the credential. Throws saying
 * what is wrong (no password file, an unknown CA, a refused password) before anything of the
 * swarm is touched, so the apps the swarm runs keep serving.
 */
export async function checkedRegistry(swarm: SwarmOptions): Promise<RegistryAccess> {
  const registry = RegistryAccess.load({
    address: swarm.registry,
    user: swarm.registryUser ?? DEFAULT_REGISTRY_USER,
    passwordFile: swarm.registryPasswordFile ?? DEFAULT_REGISTRY_PASSWORD_FILE,
    caFile: swarm.registryCaFile ?? dockerCaFile(swarm.registry),
  });
  await registry.check();
  return registry;
}

/**
 * The tasks' bridge is named in the family of slipway's bridges (`slipway<n>`, n above any
 * local subnet's 0-255), so each table's forwarding guard lets the other's traffic through.
 */
function swarmBridgeName(owner: string): string {
  return `slipway${1000 + Number(/\d+$/.exec(owner)?.[0] ?? 0)}`;
}

/**
 * The local sandboxes' rules on the tasks' bridge: tasks reach the add-ons their app is linked
 * to (on the control machine's address where add-on servers listen) and the router, no other
 * port of this machine, and no other task through it.
 */
export async function startSwarmFirewall(
  swarm: SwarmOptions,
  owner: string,
  addonAddress: string,
  routerPorts: number[],
): Promise<Firewall> {
  const firewall = new Firewall({
    table: `${owner}sw`,
    bridge: swarmBridgeName(owner),
    subnet: swarm.subnet,
    gateway: addonAddress,
    routerPorts: routerPorts.filter((p) => p > 0),
    // Tasks on other nodes reach the add-on servers here through their routes, not the bridge.
    subnetBeyondBridge: true,
  });
  await firewall.start();
  return firewall;
}

/** Both bridges' tables follow the same sandboxes and add-on links. */
export function bothFirewalls(a: Firewall, b: Firewall): Pick<Firewall, 'addSandbox' | 'removeSandbox' | 'setAddonAccess'> {
  return {
    addSandbox: async (kind, address) => void (await Promise.all([a.addSandbox(kind, address), b.addSandbox(kind, address)])),
    removeSandbox: async (kind, address) => void (await Promise.all([a.removeSandbox(kind, address), b.removeSandbox(kind, address)])),
    setAddonAccess: async (endpoints, ports) =>
      void (await Promise.all([a.setAddonAccess(endpoints, ports), b.setAddonAccess(endpoints, ports)])),
  };
}

/** Checks the swarm (saying what to do when it is not usable) and readies the backend. */
export async function startSwarmBackend(
  swarm: SwarmOptions,
  owner: string,
  networkEvents: SandboxNetworkEvents,
  log: (line: string) => void,
  /** Where tasks reach this machine's router and add-on servers (the sandboxes' gateway). */
  controlMachineAddress?: string,
  /** The data folder: the FS buckets' server keeps its state and certificates in it. */
  dataDir?: string,
): Promise<SwarmBackend> {
  const registry = await checkedRegistry(swarm);
  const backend = new SwarmBackend({
    api: new DockerApi(swarm.dockerSocket),
    registry,
    owner,
    subnet: swarm.subnet,
    bridgeName: swarmBridgeName(owner),
    controlMachineAddress,
    networkEvents,
    log,
    ...(swarm.bucketServer && dataDir
      ? { bucketServer: { host: parseBucketServerAddress(swarm.bucketServer), stateDir: join(dataDir, 'fs-buckets', 'gluster') } }
      : {}),
  });
  const node = await backend.init();
  log(
    `Instances run on Docker Swarm (Docker ${node.serverVersion}, ${node.nodes} node(s), ${node.managers} manager(s)); images go to ${swarm.registry}; tasks on ${swarm.subnet}.`,
  );
  return backend;
}
