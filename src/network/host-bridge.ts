import { describeExit } from '../executor/run-command.js';
import { findHostTools, type HostTools } from '../executor/host-tools.js';
import type { BuildNetwork, BuildNetworks } from './build-network.js';
import {
  bridgeAddressArgv,
  bridgeExistsArgv,
  createBridgeArgv,
  deleteLinkArgv,
  deleteNamespaceArgv,
  linkUpArgv,
  subnetFallbackRouteArgv,
  listAddressesArgv,
  listLinksArgv,
  listNamespacesArgv,
  namespacePidsArgv,
  setupInstanceNetworkArgvs,
  teardownInstanceNetworkArgvs,
  type InstanceNetwork,
} from './netns-commands.js';
import { namesForSlot, slotOfHostVeth, slotOfNamespace, validateBridgeName, validatePrefix } from './netns-names.js';
import { AddressPool, addressAt, gatewayOf, parseSubnet, subnetToString, type Subnet } from './subnet.js';
import type { NetworkEvents, SandboxKind } from './network-events.js';
import { runSystemTool } from '../executor/system-tools.js';

export interface HostBridgeOptions {
  /** Host bridge every sandbox's veth joins, e.g. `slipway0`. */
  bridgeName: string;
  /** IPv4 network for sandboxes, e.g. `10.77.0.0/16`; its first address goes to the bridge. */
  subnet: string;
  /** Prefix of namespace and veth names, 1-5 characters, e.g. `slw`. */
  namespacePrefix: string;
  /** The firewall's view of which sandbox holds which address. */
  networkEvents?: NetworkEvents;
  /** Told when an earlier start's bridge is removed (its firewall table goes with it). */
  onBridgeRetired?(bridge: string): Promise<void>;
}

/** A sandbox's network on the bridge, with the slot its address and names come from. */
export type SandboxNetwork = InstanceNetwork & { slot: number };

const IP_TIMEOUT_MS = 30_000;

/**
 * The host's bridge and the network namespaces joined to it, one per sandbox (an instance, a
 * build, a hook, a one-off command), each with its own address of the subnet; the first address
 * (the gateway) is the host's. What a sandbox may reach is the firewall's business: the bridge
 * only tells it, through networkEvents, when an address is taken and when it is free again;
 * bridge ports are isolated, so sandboxes never talk to each other directly. Needs root.
 */
export class HostBridge implements BuildNetworks {
  /** Address of the host on the sandboxes' network: where they reach host services. */
  readonly gatewayAddress: string;
  readonly subnet: string;
  readonly name: string;

  private readonly prefix: string;
  private readonly parsedSubnet: Subnet;
  private readonly pool: AddressPool;
  private networkEvents: NetworkEvents | undefined;
  private readonly onBridgeRetired: ((bridge: string) => Promise<void>) | undefined;
  private hostTools: HostTools | undefined;

  constructor(options: HostBridgeOptions) {
    this.name = validateBridgeName(options.bridgeName);
    this.prefix = validatePrefix(options.namespacePrefix);
    this.parsedSubnet = parseSubnet(options.subnet);
    this.subnet = subnetToString(this.parsedSubnet);
    this.gatewayAddress = gatewayOf(this.parsedSubnet);
    this.pool = new AddressPool(this.parsedSubnet);
    this.networkEvents = options.networkEvents;
    this.onBridgeRetired = options.onBridgeRetired;
  }

  /**
   * Prepares the host: keeps the addresses of `adopted` (namespaces an earlier daemon left to
   * sandboxes that still run), removes the other namespaces and veths of this prefix left behind
   * after a crash, then creates (or reuses) the bridge holding the gateway address and brings it
   * up. Networks on another bridge (an earlier start on another --subnet) hold no address of ours.
   */
  async init(adopted: readonly SandboxNetwork[]): Promise<void> {
    const tools = await findHostTools();
    this.hostTools = tools;
    const ours = adopted.filter((network) => network.bridge === this.name);
    for (const network of ours) this.pool.reserve(network.slot);
    await this.removeStale(tools, new Set(ours.map((network) => network.slot)));
    await this.checkSubnetIsFree(tools);

    const exists = await this.capture(bridgeExistsArgv(tools, this.name), 'look up the bridge', true);
    if (exists === undefined) {
      await this.run(createBridgeArgv(tools, this.name), `create bridge ${this.name}`);
    } else {
      const details = await this.capture([tools.ip, '-d', '-o', 'link', 'show', 'dev', this.name], 'inspect the bridge');
      if (!/\bbridge\b/.test(details ?? '')) {
        throw new Error(`Interface ${this.name} exists but is not a bridge. Pick another bridgeName or remove that interface.`);
      }
    }
    await this.run(bridgeAddressArgv(tools, this.name, this.gatewayAddress, this.parsedSubnet.prefixLength), 'set the gateway address');
    await this.run(linkUpArgv(tools, this.name), `bring bridge ${this.name} up`);
    await this.run(subnetFallbackRouteArgv(tools, this.subnet, 'replace'), 'keep the subnet on this machine');
  }

  /** The host's tools, found by init(). */
  tools(): HostTools {
    if (!this.hostTools) throw new Error('LocalNetnsBackend.init() must be called (and awaited) before use.');
    return this.hostTools;
  }

  /** Sets who is told about addresses (the firewall, created after the bridge exists). */
  setNetworkEvents(events: NetworkEvents): void {
    this.networkEvents = events;
  }

  /** Tells the firewall about a sandbox an earlier daemon left on its network. */
  async attached(event: { appId: string; kind: SandboxKind; address: string }): Promise<void> {
    await this.networkEvents?.attached(event);
  }

  /** The next free address, with the names of its namespace and veth (nothing made yet). */
  allocate(): SandboxNetwork {
    const slot = this.pool.allocate();
    return {
      ...namesForSlot(this.prefix, slot),
      slot,
      address: addressAt(this.parsedSubnet, slot),
      prefixLength: this.parsedSubnet.prefixLength,
      gateway: this.gatewayAddress,
      bridge: this.name,
    };
  }

  /** Makes the namespace of `network` and joins it to the bridge; then the firewall is told who holds it. */
  async connect(network: InstanceNetwork, holder: { appId: string; kind: SandboxKind }, what: string): Promise<void> {
    for (const argv of setupInstanceNetworkArgvs(this.tools(), network)) await this.run(argv, `set up the network of ${what}`);
    await this.networkEvents?.attached({ ...holder, address: network.address });
  }

  /**
   * Kills what is left in the namespace of `network`, removes it and its veth and tells the
   * firewall its address is free; the address goes back to the pool with `free`.
   */
  async disconnect(network: InstanceNetwork, what: string): Promise<void> {
    const tools = this.tools();
    await this.killNamespaceProcesses(network.namespace);
    for (const argv of teardownInstanceNetworkArgvs(tools, network)) await this.run(argv, `remove the network of ${what}`, true);
    await this.networkEvents?.detached(network.address).catch(() => undefined);
  }

  /**
   * Gives a disconnected network's address back. On an earlier start's bridge (another
   * --subnet), the last one to leave (`lastOnItsBridge`) takes that bridge, its fallback route
   * and its firewall table with it.
   */
  async free(network: SandboxNetwork, lastOnItsBridge: boolean): Promise<void> {
    if (network.bridge === this.name) return this.pool.release(network.slot);
    if (!lastOnItsBridge) return;
    const tools = this.tools();
    const [a, b] = network.address.split('.');
    await this.run(deleteLinkArgv(tools, network.bridge), `delete bridge ${network.bridge}`, true);
    await this.run(subnetFallbackRouteArgv(tools, `${a}.${b}.0.0/${network.prefixLength}`, 'delete'), 'remove the fallback route', true);
    await this.onBridgeRetired?.(network.bridge).catch(() => undefined);
  }

  /** A network namespace for one build of an app: outbound access only, as the firewall allows. */
  async acquireBuildNetwork(appId: string): Promise<BuildNetwork> {
    this.tools();
    const network = this.allocate();
    const release = async () => {
      await this.disconnect(network, 'a build');
      await this.free(network, false);
    };
    try {
      await this.connect(network, { appId, kind: 'build' }, 'a build');
    } catch (error) {
      await release();
      throw error;
    }
    return { namespacePath: `/run/netns/${network.namespace}`, address: network.address, release };
  }

  /** Deletes the bridge (uninstall, tests). Stop its sandboxes first. */
  async remove(): Promise<void> {
    const tools = this.tools();
    await this.run(deleteLinkArgv(tools, this.name), `delete bridge ${this.name}`, true);
    await this.run(subnetFallbackRouteArgv(tools, this.subnet, 'delete'), 'remove the fallback route', true);
  }

  async killNamespaceProcesses(namespace: string): Promise<void> {
    const out = await this.capture(namespacePidsArgv(this.tools(), namespace), 'list processes of a namespace', true);
    for (const pid of (out ?? '')
      .split('\n')
      .map(Number)
      .filter((n) => Number.isInteger(n) && n > 1)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }

  /** Removes the namespaces and veths of this prefix except those of the slots adopted sandboxes hold. */
  private async removeStale(tools: HostTools, adoptedSlots: ReadonlySet<number>): Promise<void> {
    const namespaces = (await this.capture(listNamespacesArgv(tools), 'list namespaces')) ?? '';
    for (const line of namespaces.split('\n')) {
      const name = line.trim().split(/\s+/)[0] ?? '';
      const slot = slotOfNamespace(this.prefix, name);
      if (slot === undefined || adoptedSlots.has(slot)) continue;
      await this.killNamespaceProcesses(name);
      await this.run(deleteNamespaceArgv(tools, name), `remove stale namespace ${name}`, true);
    }
    const links = (await this.capture(listLinksArgv(tools), 'list interfaces')) ?? '';
    for (const line of links.split('\n')) {
      // "12: slw-5h@if2: <BROADCAST,...>"
      const name = /^\d+:\s+([^:@\s]+)/.exec(line)?.[1] ?? '';
      const slot = slotOfHostVeth(this.prefix, name);
      if (slot === undefined || adoptedSlots.has(slot)) continue;
      await this.run(deleteLinkArgv(tools, name), `remove stale interface ${name}`, true);
    }
  }

  /** Refuses a subnet that overlaps an address some other interface already holds. */
  private async checkSubnetIsFree(tools: HostTools): Promise<void> {
    const out = (await this.capture(listAddressesArgv(tools), 'list host addresses')) ?? '';
    for (const line of out.split('\n')) {
      // "2: eth0    inet 192.0.2.2/24 brd ... scope global eth0"
      const m = /^\d+:\s+(\S+)\s+inet\s+(\d+\.\d+\.\d+\.\d+\/\d+)/.exec(line);
      if (!m || m[1] === this.name) continue;
      let other: Subnet;
      try {
        const [addr, len] = m[2]!.split('/');
        const size = 2 ** (32 - Number(len));
        const n = addr!.split('.').reduce((acc, p) => acc * 256 + Number(p), 0);
        other = { network: n - (n % size), prefixLength: Number(len), size };
      } catch {
        continue;
      }
      const a = this.parsedSubnet;
      if (a.network < other.network + other.size && other.network < a.network + a.size) {
        throw new Error(
          `The instance subnet ${this.subnet} overlaps ${m[2]} on interface ${m[1]}. Configure a subnet that no host interface uses.`,
        );
      }
    }
  }

  /** Runs a root command; throws with its stderr unless it exits 0 (or `tolerant`). */
  private async run(argv: string[], what: string, tolerant = false): Promise<void> {
    await this.capture(argv, what, tolerant);
  }

  /** Runs a root command and returns its stdout; undefined when it failed and `tolerant`. */
  private async capture(argv: string[], what: string, tolerant = false): Promise<string | undefined> {
    const r = await runSystemTool(argv, IP_TIMEOUT_MS);
    if (r.exitCode === 0) return r.out.join('\n');
    if (tolerant) return undefined;
    throw new Error(
      `Could not ${what}: \`${argv.join(' ')}\` ${describeExit(r)}: ${r.err.join(' ').trim() || '(no error output)'}. ` +
        'Check that the daemon runs as root with iproute2 installed and that nothing else manages these interfaces.',
    );
  }
}
