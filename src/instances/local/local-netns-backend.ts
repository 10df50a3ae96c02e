import type { FoundInstance, Instance, InstanceBackend, InstanceCallbacks, InstanceSpec } from '../backend.js';
import { InstanceRecords, type InstanceRecord } from './instance-records.js';
import { sandboxIdFor } from '../../sandbox/describe.js';
import type { Sandbox } from '../../sandbox/sandbox-host.js';
import { runCommand, describeExit } from '../../executor/run-command.js';
import { findHostTools, type HostTools } from '../../executor/host-tools.js';
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
import { namesForSlot, slotOfHostVeth, slotOfNamespace, validateBridgeName, validateInstanceId, validatePrefix } from './names.js';
import { AddressPool, addressAt, gatewayOf, parseSubnet, subnetToString, type Subnet } from './subnet.js';
import { DEFAULT_BACKOFF, type BackoffPolicy } from '../../executor/restart-backoff.js';
import { LocalInstance, workerOfSandbox, type InstanceHost } from './local-instance.js';
import type { SandboxHost } from '../../sandbox/sandbox-host.js';
import type { BuildNetwork, BuildNetworks } from '../../sandbox/build-network.js';

/** Told when a sandbox gets an address on the instance network and when it gives it back. */
export interface SandboxNetworkEvents {
  attached(event: { appId: string; kind: 'build' | 'instance'; address: string }): Promise<void>;
  detached(address: string): Promise<void>;
}

export interface LocalNetnsBackendOptions {
  /** Host bridge every instance's veth joins, e.g. `slipway0`. */
  bridgeName: string;
  /** IPv4 network for instances, e.g. `10.77.0.0/16`; its first address goes to the bridge. */
  subnet: string;
  /** Prefix of namespace and veth names, 1-5 characters, e.g. `slw`. */
  namespacePrefix: string;
  /** Starts the sandboxes instances run in. */
  sandboxes: SandboxHost;
  /** The firewall's view of which sandbox holds which address. */
  networkEvents?: SandboxNetworkEvents;
  /** Crash restart delays; defaults to 1 s doubling to 30 s, reset after 60 s up. */
  restartBackoff?: Partial<BackoffPolicy>;
  /**
   * Root-only folder where each running instance is written down, so that a later daemon adopts
   * what this one leaves running (instance-records.ts). Without it nothing is adopted.
   */
  recordsDir?: string;
  /** Told when an earlier start's bridge is removed (its firewall table goes with it). */
  onBridgeRetired?(bridge: string): Promise<void>;
}

const SYSTEM_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' };
const IP_TIMEOUT_MS = 30_000;

/**
 * Runs each instance in its own network namespace joined to a host bridge, so every app
 * listens on 0.0.0.0:8080 and the host reaches it at the instance's own address. Needs root.
 * Builds get namespaces of their own on the same bridge (acquireBuildNetwork). What a sandbox
 * may reach is the firewall's business (src/network/): the backend only tells it, through
 * networkEvents, when an address is taken and when it is free again; bridge ports are isolated,
 * so sandboxes never talk to each other directly.
 */
export class LocalNetnsBackend implements InstanceBackend, BuildNetworks {
  /** Address of the host on the instance network: where instances reach host services. */
  readonly gatewayAddress: string;
  readonly subnet: string;

  private readonly bridge: string;
  private readonly prefix: string;
  private readonly parsedSubnet: Subnet;
  private readonly pool: AddressPool;
  private readonly sandboxes: SandboxHost;
  private networkEvents: SandboxNetworkEvents | undefined;
  private readonly backoff: BackoffPolicy;
  private readonly instances = new Map<string, LocalInstance>();
  private tools: HostTools | undefined;
  private readonly records: InstanceRecords | undefined;
  private readonly onBridgeRetired: ((bridge: string) => Promise<void>) | undefined;
  /** Records of instances an earlier daemon left running, found at init, until adoptAll. */
  private found: InstanceRecord[] = [];

  constructor(options: LocalNetnsBackendOptions) {
    this.bridge = validateBridgeName(options.bridgeName);
    this.prefix = validatePrefix(options.namespacePrefix);
    this.parsedSubnet = parseSubnet(options.subnet);
    this.subnet = subnetToString(this.parsedSubnet);
    this.gatewayAddress = gatewayOf(this.parsedSubnet);
    this.pool = new AddressPool(this.parsedSubnet);
    this.sandboxes = options.sandboxes;
    this.networkEvents = options.networkEvents;
    this.backoff = { ...DEFAULT_BACKOFF, ...options.restartBackoff };
    this.records = options.recordsDir === undefined ? undefined : new InstanceRecords(options.recordsDir);
    this.onBridgeRetired = options.onBridgeRetired;
  }

  /**
   * The sandboxes of instances an earlier daemon left running (main processes and workers),
   * which the daemon's start-up sweep must leave alone. Call before the sweep and init().
   */
  sandboxesToKeep(): Set<string> {
    const held = new Set(this.sandboxes.heldSandboxes());
    const keep = new Set<string>();
    this.found = [];
    for (const record of this.records?.all() ?? []) {
      const id = record.spec.instanceId;
      if (!held.has(sandboxIdFor(id))) {
        this.records!.remove(id);
        continue;
      }
      this.found.push(record);
      keep.add(sandboxIdFor(id));
      for (const sandbox of held) if (workerOfSandbox(id, sandbox)) keep.add(sandbox);
    }
    return keep;
  }

  /** The addresses the instances an earlier daemon left running hold, to tell the firewall first. */
  foundAddresses(): Array<{ appId: string; kind: 'instance'; address: string }> {
    return this.found.map((r) => ({ appId: r.spec.appId, kind: 'instance' as const, address: r.network.address }));
  }

  async adoptAll(claim: (found: FoundInstance) => InstanceCallbacks | undefined): Promise<Instance[]> {
    const tools = this.requireInit();
    const adopted: Instance[] = [];
    const held = this.sandboxes.heldSandboxes();
    for (const { spec: recorded, network } of this.found) {
      const callbacks = claim(recorded);
      const instance = new LocalInstance(this.instanceHost(tools), { ...recorded, onLog: () => undefined, ...callbacks }, network);
      this.instances.set(instance.id, instance);
      const main = this.sandboxes.attach(sandboxIdFor(instance.id), instance.mainLineReader);
      const workers = new Map<number, { sandbox: Sandbox; attempt: number }>();
      for (const id of held) {
        const worker = workerOfSandbox(instance.id, id);
        const reader = worker && instance.workerLineReader(worker.index);
        if (!worker || !reader || (workers.get(worker.index)?.attempt ?? -1) > worker.attempt) continue;
        const sandbox = this.sandboxes.attach(id, reader);
        if (sandbox) workers.set(worker.index, { sandbox, attempt: worker.attempt });
      }
      await this.networkEvents?.attached({ appId: recorded.appId, kind: 'instance', address: network.address });
      if (!main) {
        // Ended between the start's look and now: nothing to adopt, its network goes.
        await Promise.all([...workers.values()].map(({ sandbox }) => sandbox.signal('SIGKILL')));
        await instance.stop(0);
        continue;
      }
      if (network.bridge !== this.bridge)
        instance.outdated = `it runs on ${network.bridge}, the network of an earlier start (another --subnet)`;
      instance.adopt(main, workers);
      if (callbacks) adopted.push(instance);
      else await instance.stop(10_000);
    }
    this.found = [];
    return adopted;
  }

  /**
   * Prepares the host: removes namespaces and veths this prefix left behind after a crash,
   * then creates (or reuses) the bridge holding the gateway address and brings it up.
   */
  async init(): Promise<void> {
    if (process.getuid?.() !== 0) {
      throw new Error('The local instance backend needs root (network namespaces, veth pairs, switching user). Run the daemon as root.');
    }
    if (this.instances.size > 0) throw new Error('init() must run before any instance is started.');
    const tools = await findHostTools();
    this.tools = tools;
    // Instances on another bridge (an earlier start on another --subnet) hold no address of ours.
    const ours = this.found.filter((r) => r.network.bridge === this.bridge);
    for (const record of ours) this.pool.reserve(record.network.slot);
    await this.removeStale(tools, new Set(ours.map((r) => r.network.slot)));
    await this.checkSubnetIsFree(tools);

    const exists = await this.capture(bridgeExistsArgv(tools, this.bridge), 'look up the bridge', true);
    if (exists === undefined) {
      await this.run(createBridgeArgv(tools, this.bridge), `create bridge ${this.bridge}`);
    } else {
      const details = await this.capture([tools.ip, '-d', '-o', 'link', 'show', 'dev', this.bridge], 'inspect the bridge');
      if (!/\bbridge\b/.test(details ?? '')) {
        throw new Error(`Interface ${this.bridge} exists but is not a bridge. Pick another bridgeName or remove that interface.`);
      }
    }
    await this.run(bridgeAddressArgv(tools, this.bridge, this.gatewayAddress, this.parsedSubnet.prefixLength), 'set the gateway address');
    await this.run(linkUpArgv(tools, this.bridge), `bring bridge ${this.bridge} up`);
    await this.run(subnetFallbackRouteArgv(tools, this.subnet, 'replace'), 'keep the subnet on this machine');
  }

  async start(spec: InstanceSpec): Promise<Instance> {
    const tools = this.requireInit();
    const id = validateInstanceId(spec.instanceId);
    if (this.instances.has(id)) throw new Error(`Instance ${id} is already running; stop it first or use a new instance id.`);
    if (spec.command.length === 0) throw new Error(`Instance ${id} has no command to run.`);

    const network = this.allocateNetwork();
    const instance = new LocalInstance(this.instanceHost(tools), spec, network);
    this.instances.set(id, instance);
    try {
      for (const argv of setupInstanceNetworkArgvs(tools, network)) {
        await this.run(argv, `set up the network of instance ${id}`);
      }
      await this.networkEvents?.attached({ appId: spec.appId, kind: 'instance', address: network.address });
      await instance.launch();
      this.records?.write(spec, network);
    } catch (e) {
      await instance.stop(0).catch(() => undefined);
      throw e;
    }
    return instance;
  }

  /** Sets who is told about addresses (the firewall, created after the bridge exists). */
  setNetworkEvents(events: SandboxNetworkEvents): void {
    this.networkEvents = events;
  }

  /** A network namespace for one build of an app: outbound access only, as the firewall allows. */
  async acquireBuildNetwork(appId: string): Promise<BuildNetwork> {
    const tools = this.requireInit();
    const network = this.allocateNetwork();
    const release = async () => {
      await this.killNamespaceProcesses(tools, network.namespace);
      for (const argv of teardownInstanceNetworkArgvs(tools, network)) {
        await this.run(argv, `remove the network of a build`, true);
      }
      await this.networkEvents?.detached(network.address).catch(() => undefined);
      this.pool.release(network.slot);
    };
    try {
      for (const argv of setupInstanceNetworkArgvs(tools, network)) {
        await this.run(argv, `set up the network of a build`);
      }
      await this.networkEvents?.attached({ appId, kind: 'build', address: network.address });
    } catch (error) {
      await release();
      throw error;
    }
    return { namespacePath: `/run/netns/${network.namespace}`, address: network.address, release };
  }

  private allocateNetwork() {
    const slot = this.pool.allocate();
    return {
      ...namesForSlot(this.prefix, slot),
      slot,
      address: addressAt(this.parsedSubnet, slot),
      prefixLength: this.parsedSubnet.prefixLength,
      gateway: this.gatewayAddress,
      bridge: this.bridge,
    };
  }

  list(): Instance[] {
    return [...this.instances.values()];
  }

  async stopAll(graceMs?: number): Promise<void> {
    await Promise.all([...this.instances.values()].map((i) => i.stop(graceMs)));
  }

  async detach(): Promise<void> {
    await Promise.all([...this.instances.values()].map((i) => i.detach()));
    this.instances.clear();
  }

  /** Deletes the bridge (uninstall, tests). Stop the instances first. */
  async removeBridge(): Promise<void> {
    const tools = this.requireInit();
    if (this.instances.size > 0) throw new Error(`Cannot remove bridge ${this.bridge}: ${this.instances.size} instance(s) still running.`);
    await this.run(deleteLinkArgv(tools, this.bridge), `delete bridge ${this.bridge}`, true);
    await this.run(subnetFallbackRouteArgv(tools, this.subnet, 'delete'), 'remove the fallback route', true);
  }

  private instanceHost(tools: HostTools): InstanceHost {
    return {
      tools,
      sandboxes: this.sandboxes,
      backoff: this.backoff,
      killNamespaceProcesses: (ns) => this.killNamespaceProcesses(tools, ns),
      release: async (instance) => {
        await this.killNamespaceProcesses(tools, instance.network.namespace);
        for (const argv of teardownInstanceNetworkArgvs(tools, instance.network)) {
          await this.run(argv, `remove the network of instance ${instance.id}`, true);
        }
        await this.networkEvents?.detached(instance.network.address).catch(() => undefined);
        this.records?.remove(instance.id);
        if (this.instances.get(instance.id) === instance) this.instances.delete(instance.id);
        if (instance.network.bridge === this.bridge) this.pool.release(instance.network.slot);
        else await this.retireIfUnused(tools, instance.network);
      },
    };
  }

  /**
   * The last instance on an earlier start's bridge (another --subnet) is gone: that bridge, its
   * fallback route and its firewall table go too.
   */
  private async retireIfUnused(tools: HostTools, network: InstanceNetwork): Promise<void> {
    if ([...this.instances.values()].some((i) => i.network.bridge === network.bridge)) return;
    const [a, b] = network.address.split('.');
    await this.run(deleteLinkArgv(tools, network.bridge), `delete bridge ${network.bridge}`, true);
    await this.run(subnetFallbackRouteArgv(tools, `${a}.${b}.0.0/${network.prefixLength}`, 'delete'), 'remove the fallback route', true);
    await this.onBridgeRetired?.(network.bridge).catch(() => undefined);
  }

  private requireInit(): HostTools {
    if (!this.tools) throw new Error('LocalNetnsBackend.init() must be called (and awaited) before use.');
    return this.tools;
  }

  private async killNamespaceProcesses(tools: HostTools, namespace: string): Promise<void> {
    const out = await this.capture(namespacePidsArgv(tools, namespace), 'list processes of a namespace', true);
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

  /** Removes the namespaces and veths of this prefix except those of the slots adopted instances hold. */
  private async removeStale(tools: HostTools, adoptedSlots: ReadonlySet<number>): Promise<void> {
    const namespaces = (await this.capture(listNamespacesArgv(tools), 'list namespaces')) ?? '';
    for (const line of namespaces.split('\n')) {
      const name = line.trim().split(/\s+/)[0] ?? '';
      const slot = slotOfNamespace(this.prefix, name);
      if (slot === undefined || adoptedSlots.has(slot)) continue;
      await this.killNamespaceProcesses(tools, name);
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
      if (!m || m[1] === this.bridge) continue;
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
    const out: string[] = [];
    const err: string[] = [];
    const r = await runCommand({
      argv,
      cwd: '/',
      env: SYSTEM_ENV,
      timeoutMs: IP_TIMEOUT_MS,
      onLine: (stream, line) => (stream === 'out' ? out : err).push(line),
    });
    if (r.exitCode === 0) return out.join('\n');
    if (tolerant) return undefined;
    throw new Error(
      `Could not ${what}: \`${argv.join(' ')}\` ${describeExit(r)}: ${err.join(' ').trim() || '(no error output)'}. ` +
        'Check that the daemon runs as root with iproute2 installed and that nothing else manages these interfaces.',
    );
  }
}
