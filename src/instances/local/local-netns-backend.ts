import type { FoundInstance, Instance, InstanceBackend, InstanceCallbacks, InstanceSpec } from '../backend.js';
import { InstanceRecords, type InstanceRecord } from './instance-records.js';
import { sandboxIdFor } from '../../sandbox/describe.js';
import type { Sandbox } from '../../sandbox/sandbox-host.js';
import { DEFAULT_BACKOFF, type BackoffPolicy } from '../../executor/restart-backoff.js';
import type { HostTools } from '../../executor/host-tools.js';
import { LocalInstance, workerOfSandbox, type InstanceHost } from './local-instance.js';
import type { SandboxHost } from '../../sandbox/sandbox-host.js';
import type { BuildNetwork, BuildNetworks } from '../../network/build-network.js';
import { validateInstanceId } from './instance-id.js';
import { HostBridge } from '../../network/host-bridge.js';
import type { NetworkEvents } from '../../network/network-events.js';

/** Told when a sandbox gets an address on the instance network and when it gives it back. */
export type SandboxNetworkEvents = NetworkEvents;

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

/**
 * Runs each instance in its own network namespace joined to the host's bridge
 * (network/host-bridge.ts), so every app listens on 0.0.0.0:8080 and the host reaches it at the
 * instance's own address. Needs root. Builds get namespaces of their own on the same bridge
 * (acquireBuildNetwork, the bridge's). What a sandbox may reach is the firewall's business
 * (src/network/): the bridge tells it when an address is taken and when it is free again.
 */
export class LocalNetnsBackend implements InstanceBackend, BuildNetworks {
  /** The host's bridge and the sandboxes' namespaces on it. */
  readonly bridge: HostBridge;
  /** Address of the host on the instance network: where instances reach host services. */
  readonly gatewayAddress: string;
  readonly subnet: string;

  private readonly sandboxes: SandboxHost;
  private readonly backoff: BackoffPolicy;
  private readonly instances = new Map<string, LocalInstance>();
  private readonly records: InstanceRecords | undefined;
  /** Records of instances an earlier daemon left running, found at init, until adoptAll. */
  private found: InstanceRecord[] = [];

  constructor(options: LocalNetnsBackendOptions) {
    this.bridge = new HostBridge(options);
    this.subnet = this.bridge.subnet;
    this.gatewayAddress = this.bridge.gatewayAddress;
    this.sandboxes = options.sandboxes;
    this.backoff = { ...DEFAULT_BACKOFF, ...options.restartBackoff };
    this.records = options.recordsDir === undefined ? undefined : new InstanceRecords(options.recordsDir);
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
      await this.bridge.attached({ appId: recorded.appId, kind: 'instance', address: network.address });
      if (!main) {
        // Ended between the start's look and now: nothing to adopt, its network goes.
        await Promise.all([...workers.values()].map(({ sandbox }) => sandbox.signal('SIGKILL')));
        await instance.stop(0);
        continue;
      }
      if (network.bridge !== this.bridge.name)
        instance.outdated = `it runs on ${network.bridge}, the network of an earlier start (another --subnet)`;
      instance.adopt(main, workers);
      if (callbacks) adopted.push(instance);
      else await instance.stop(10_000);
    }
    this.found = [];
    return adopted;
  }

  /**
   * Prepares the host: the bridge, with the addresses the instances an earlier daemon left
   * running hold kept for them and every other namespace of this prefix removed.
   */
  async init(): Promise<void> {
    if (process.getuid?.() !== 0) {
      throw new Error('The local instance backend needs root (network namespaces, veth pairs, switching user). Run the daemon as root.');
    }
    if (this.instances.size > 0) throw new Error('init() must run before any instance is started.');
    await this.bridge.init(this.found.map((record) => record.network));
  }

  async start(spec: InstanceSpec): Promise<Instance> {
    const tools = this.requireInit();
    const id = validateInstanceId(spec.instanceId);
    if (this.instances.has(id)) throw new Error(`Instance ${id} is already running; stop it first or use a new instance id.`);
    if (spec.command.length === 0) throw new Error(`Instance ${id} has no command to run.`);

    const network = this.bridge.allocate();
    const instance = new LocalInstance(this.instanceHost(tools), spec, network);
    this.instances.set(id, instance);
    try {
      await this.bridge.connect(network, { appId: spec.appId, kind: 'instance' }, `instance ${id}`);
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
    this.bridge.setNetworkEvents(events);
  }

  /** A network namespace for one build of an app (the bridge's). */
  acquireBuildNetwork(appId: string): Promise<BuildNetwork> {
    return this.bridge.acquireBuildNetwork(appId);
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
    this.requireInit();
    if (this.instances.size > 0)
      throw new Error(`Cannot remove bridge ${this.bridge.name}: ${this.instances.size} instance(s) still running.`);
    await this.bridge.remove();
  }

  private instanceHost(tools: HostTools): InstanceHost {
    return {
      tools,
      sandboxes: this.sandboxes,
      backoff: this.backoff,
      killNamespaceProcesses: (ns) => this.bridge.killNamespaceProcesses(ns),
      release: async (instance) => {
        await this.bridge.disconnect(instance.network, `instance ${instance.id}`);
        this.records?.remove(instance.id);
        if (this.instances.get(instance.id) === instance) this.instances.delete(instance.id);
        const others = [...this.instances.values()].some((i) => i.network.bridge === instance.network.bridge);
        await this.bridge.free(instance.network, !others);
      },
    };
  }

  /** The host's tools, once init() found them. */
  private requireInit(): HostTools {
    return this.bridge.tools();
  }
}
