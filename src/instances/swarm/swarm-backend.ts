import type { FoundInstance, Instance, InstanceBackend, InstanceCallbacks, InstanceSpec, OneOffSpec, WorkerSpec } from '../backend.js';
import type { Sandbox } from '../../sandbox/sandbox-host.js';
import { startOneOffTask } from './one-off-task.js';
import { SwarmWorker } from './swarm-worker.js';
import { isolateTaskPort } from './port-isolation.js';
import type { SandboxNetworkEvents } from '../local/local-netns-backend.js';
import type { DockerApi } from './docker-api.js';
import { checkSwarmManager, type SwarmNode } from './swarm-checks.js';
import { ReleaseImages } from './release-images.js';
import { LABEL_OWNER, serviceName, serviceSpec, validateOwner, type ServiceSpecInput } from './service-spec.js';
import { SwarmServices, type SwarmTask } from './swarm-services.js';
import { readFoundService, type FoundService, type ListedService } from './adoption.js';
import { adoptFound } from './adopt-found.js';
import { NODE_API_LABEL } from './node-apis.js';
import { NodeFilter } from './node-filter.js';
import { SwarmInstance } from './swarm-instance.js';
import { ReleaseService } from './release-service.js';
import { identityFile } from './task-entrypoint.js';
import {
  holderOf,
  instanceServiceInput,
  oneOffServiceInput,
  releaseKey,
  workerKey,
  workerServiceInput,
  type ServiceIdentity,
} from './service-inputs.js';
import { TasksNetwork } from './tasks-network.js';
import type { RegistryAccess } from './registry.js';
import { randomBytes } from 'node:crypto';
import { usedToolchainFolders } from './toolchain-folders.js';
import type { SandboxIdentity } from '../../sandbox/sandbox-identity.js';
import { BucketServer, type BucketServerOptions } from './bucket-server.js';
import { NodeBucketMounts } from './node-bucket-mounts.js';

export interface SwarmBackendOptions {
  api: DockerApi;
  /** The registry the nodes pull from, reached with its credential. */
  registry: RegistryAccess;
  /** Names this daemon's services, networks and images (e.g. `slipway77`): leftovers of another daemon are never touched. */
  owner: string;
  /** The instances' network: a /16 no node uses otherwise (e.g. 172.31.0.0/16), first address the node's own. */
  subnet: string;
  /** The bridge each node makes for the tasks' network (default `<owner>sw0`, cut to 15 characters). */
  bridgeName?: string;
  /**
   * Where tasks reach the control machine (the router and the add-on servers); the other nodes'
   * filters let their tasks reach this address only. Default: the tasks' network's gateway.
   */
  controlMachineAddress?: string;
  /** Told when an instance holds an address and when it gives it back (add-on access). */
  networkEvents?: SandboxNetworkEvents;
  /** FS buckets: where this machine's GlusterFS server of them listens for the nodes, and its folder (bucket-server.ts). */
  bucketServer?: Omit<BucketServerOptions, 'log'>;
  /** How long a task may take to be scheduled, pull its image and run. */
  startTimeoutMs?: number;
  restartDelayMs?: number;
  log?(line: string): void;
}

const DEFAULT_START_TIMEOUT_MS = 120_000;
const DEFAULT_RESTART_DELAY_MS = 1000;

/**
 * Runs the instances of each release as the replicas of one Docker Swarm service, from an image
 * of the release pushed to the configured registry. The runtime still decides which instances
 * serve: it starts the new ones (a new service for a new release, one more replica for a scale),
 * health-checks each task at its own address, switches the router and stops the old ones,
 * exactly as with the local backend; Swarm places, runs and restarts the tasks.
 */
export class SwarmBackend implements InstanceBackend {
  readonly images: ReleaseImages;
  /** The tasks' network: its bridge is what the firewall filters on this node. */
  readonly network: TasksNetwork;

  /** The node's address on the instances' network: where tasks reach this machine. */
  get gatewayAddress(): string {
    return this.network.gatewayAddress;
  }

  private readonly services: SwarmServices;
  private readonly owner: string;
  private readonly instances = new Map<string, SwarmInstance>();
  private readonly releases = new Map<string, ReleaseService>();
  private generation = 0;
  /** Tells this run's service names from an earlier run's, whose services may still be adopted. */
  private readonly run = randomBytes(4).toString('hex');
  /** Services an earlier daemon left running, found at init, until adoptAll. */
  private found: FoundService[] = [];
  /** The addresses of their running tasks, allowed their add-ons from init on, until adoptAll. */
  private foundAddresses = new Set<string>();
  /** One-off commands running: control-plane work, they end when the daemon lets go. */
  private readonly oneOffs = new Set<Sandbox>();
  private node: SwarmNode | undefined;
  private networkEvents: SandboxNetworkEvents | undefined;
  /** Filters the tasks' bridge of the other nodes, through their Docker APIs. */
  private readonly nodeFilter: NodeFilter;
  /** FS buckets: this machine's GlusterFS server of them (when configured) and their mounts on the nodes. */
  private readonly bucketServer: BucketServer | undefined;
  private readonly nodeBuckets: NodeBucketMounts;
  private readonly log: (line: string) => void;

  constructor(private readonly o: SwarmBackendOptions) {
    this.owner = validateOwner(o.owner);
    this.services = new SwarmServices(o.api, o.registry.engineAuth);
    this.log = o.log ?? (() => undefined);
    this.images = new ReleaseImages({ api: o.api, registry: o.registry, namespace: this.owner, log: this.log });
    this.network = new TasksNetwork({
      api: o.api,
      owner: this.owner,
      subnet: o.subnet,
      bridgeName: o.bridgeName ?? `${this.owner.slice(0, 12)}sw0`,
    });
    this.networkEvents = o.networkEvents;
    this.nodeFilter = new NodeFilter({
      manager: o.api,
      registry: o.registry,
      owner: this.owner,
      networkName: this.network.name,
      controlMachine: o.controlMachineAddress ?? this.network.gatewayAddress,
      log: this.log,
    });
    this.bucketServer = o.bucketServer && new BucketServer({ ...o.bucketServer, log: this.log });
    this.nodeBuckets = new NodeBucketMounts({ manager: o.api, registry: o.registry, owner: this.owner, log: this.log });
  }

  /**
   * Checks that Docker answers and that this node is a swarm manager (saying what to do when
   * not), keeps the instances' and workers' services an earlier run of this daemon left for
   * adoptAll, removes its other leftovers (one-off commands' jobs, services it cannot adopt) and
   * creates the network, or finds it in place: nothing here touches a running task.
   */
  async init(): Promise<SwarmNode> {
    this.node = await checkSwarmManager(this.o.api);
    this.services.nodes.setOwnNode(this.node.nodeId);
    this.found = [];
    for (const service of (await this.services.withLabels([`${LABEL_OWNER}=${this.owner}`])) as ListedService[]) {
      const found = readFoundService(service, this.owner);
      if (found) {
        this.found.push(found);
        continue;
      }
      this.log(`removing swarm service ${service.Spec.Name} left by a previous run`);
      await this.services.remove(service.ID);
    }
    const kept = new Set(this.found.map((f) => f.name));
    for (const service of await this.services.removeContainersOf(`${this.owner}-`, this.o.api, kept)) {
      this.log(`removing a container of swarm service ${service} left by a previous run`);
    }
    for (const node of await this.services.nodes.undeclared().catch(() => []))
      this.log(
        `swarm node ${node} takes tasks but slipway does not know its Docker API: a task placed there cannot start (docker node update --label-add ${NODE_API_LABEL}=<unix:///path or tcp://host:port>, docs/swarm.md)`,
      );
    await this.network.ensure();
    // The same on the other nodes the daemon can reach, and their bridge filtered; one that does
    // not answer is only told (its first task tries again).
    for (const { nodeId, api } of await this.services.nodes.declared().catch(() => [])) {
      try {
        for (const service of await this.services.removeContainersOf(`${this.owner}-`, api, kept))
          this.log(`removing a container of swarm service ${service} left by a previous run on node ${nodeId}`);
        if (!(await this.nodeFilter.ensure(nodeId, api)))
          this.log(`swarm node ${nodeId} has no part of the tasks' network yet: its bridge is filtered when its first task runs`);
      } catch (e) {
        this.log(`could not tidy or filter swarm node ${nodeId}: ${(e as Error).message}`);
      }
    }
    await this.attachFound();
    // Images of releases removed while no daemon ran (apps deleted, old releases pruned).
    void this.images.pruneApp().catch((e: Error) => this.log(`could not remove old release images: ${e.message}`));
    return this.node;
  }

  /** A deleted app's release images go, from this node and from the registry. */
  async forgetApp(appId: string): Promise<void> {
    const removed = await this.images.pruneApp(appId);
    if (removed.length) this.log(`removed the release images of deleted app ${appId}: ${removed.join(', ')}`);
  }

  setNetworkEvents(events: SandboxNetworkEvents): void {
    this.networkEvents = events;
  }

  async start(spec: InstanceSpec): Promise<Instance> {
    if (!this.node) throw new Error('SwarmBackend.init() must be called (and awaited) before use.');
    const id = spec.instanceId;
    if (this.instances.has(id)) throw new Error(`Instance ${id} is already running; stop it first or use a new instance id.`);
    if (spec.command.length === 0) throw new Error(`Instance ${id} has no command to run.`);
    await this.mountBuckets(spec.sandbox);

    const image = await this.imageOf(spec);
    void this.images.pruneApp().catch((e: Error) => this.log(`could not remove old release images: ${e.message}`));

    const instance = this.newInstance(spec, this.releaseService(spec, image));
    try {
      await instance.launch(this.o.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
      for (const [index, worker] of (spec.workers ?? []).entries()) instance.addWorker(await this.startWorker(spec, image, worker, index));
    } catch (error) {
      await instance.stop(0).catch(() => undefined);
      throw error;
    }
    return instance;
  }

  /** The release's image, built and pushed once per deployment (release-images.ts). */
  private imageOf(spec: InstanceSpec | OneOffSpec): Promise<string> {
    const { appId, deploymentId, releaseDir, preRunLayer, sandbox, env } = spec;
    const readOnlyPaths = usedToolchainFolders(sandbox.readOnlyPaths, env);
    return this.images.releaseImage({
      appId,
      deploymentId,
      releaseDir,
      ...(preRunLayer === undefined ? {} : { preRunLayer }),
      readOnlyPaths,
      user: sandbox.user,
    });
  }

  private newInstance(spec: InstanceSpec, release: ReleaseService): SwarmInstance {
    const instance = new SwarmInstance(
      {
        services: this.services,
        network: this.network.name,
        isolate: (task) => this.isolate(task),
        attached: async (i, address) => this.networkEvents?.attached({ appId: i.spec.appId, kind: 'instance', address }),
        detached: async (_i, address) => this.networkEvents?.detached(address),
        forget: (i) => {
          if (this.instances.get(i.id) === i) this.instances.delete(i.id);
          if (i.release.closing && this.releases.get(i.release.key) === i.release) this.releases.delete(i.release.key);
        },
      },
      spec,
      release,
    );
    this.instances.set(spec.instanceId, instance);
    return instance;
  }

  /**
   * The service of the instance's release: instances that share everything but their identity
   * (INSTANCE_ID, INSTANCE_NUMBER) are replicas of one service. A release whose service is
   * closing (its last instance stopping) gets a new one.
   */
  private releaseService(spec: InstanceSpec, image: string): ReleaseService {
    const key = releaseKey(spec, image);
    const restartDelayMs = this.o.restartDelayMs ?? DEFAULT_RESTART_DELAY_MS;
    return this.serviceFor(key, 'r', (s) => instanceServiceInput(s, spec, image, key, restartDelayMs));
  }

  /** The open service of `key`, or a new one (the previous one is closing: its last replica stops). */
  private serviceFor(key: string, kind: 'r' | 'w', specOf: (s: ServiceIdentity) => ServiceSpecInput): ReleaseService {
    const current = this.releases.get(key);
    if (current && !current.closing) return current;
    for (const [k, done] of this.releases) if (done.closing && done.holders() === 0) this.releases.delete(k);
    const name = serviceName(this.owner, kind, key, `${this.run}-${this.generation++}`);
    const marker = `slipway-${randomBytes(8).toString('hex')}`;
    const spec = specOf({ name, marker, owner: this.owner, network: this.network.name });
    const user = `${spec.sandbox.user.uid}:${spec.sandbox.user.gid}`;
    const release = new ReleaseService(this.services, key, name, marker, user, (replicas) => serviceSpec({ ...spec, replicas }));
    this.releases.set(key, release);
    return release;
  }

  /** A one-off command as a Swarm job of the release's image (one-off-task.ts). */
  async runOnce(spec: OneOffSpec): Promise<Sandbox> {
    if (!this.node) throw new Error('SwarmBackend.init() must be called (and awaited) before use.');
    await this.mountBuckets(spec.sandbox);
    const image = await this.imageOf(spec);
    const name = serviceName(this.owner, 'o', `${spec.appId}\n${randomBytes(8).toString('hex')}`);
    const serviceId = await this.services.create(
      serviceSpec(oneOffServiceInput({ name, owner: this.owner, network: this.network.name }, spec, image)),
    );
    const started = await startOneOffTask(
      {
        services: this.services,
        network: this.network.name,
        attached: async (address) => this.networkEvents?.attached({ appId: spec.appId, kind: 'instance', address }),
        detached: async (address) => this.networkEvents?.detached(address),
      },
      serviceId,
      spec,
    );
    this.oneOffs.add(started);
    void started.done.finally(() => this.oneOffs.delete(started)).catch(() => undefined);
    return started;
  }

  /**
   * Isolates a running task from the other tasks and its node. On the control machine its port
   * on the bridge is isolated (`nsenter`, `ip`) and the daemon's table filters the bridge; on
   * another node, the node's bridge is filtered through its Docker API the first time one of
   * its tasks runs (node-filter.ts). A task that cannot be isolated fails its start.
   */
  private async isolate(task: SwarmTask): Promise<void> {
    const containerId = task.Status.ContainerStatus?.ContainerID;
    if (!containerId) return;
    if (!this.services.nodes.isOwn(task.NodeID)) {
      if (!(await this.nodeFilter.ensure(task.NodeID!, await this.services.nodes.of(task.NodeID))))
        throw new Error(`Swarm node ${task.NodeID} runs a task but has no configuration network ${this.network.configName} to filter.`);
      return;
    }
    await isolateTaskPort(this.o.api, containerId);
  }

  /**
   * The FS buckets a release names, reachable on every node a task may land on: served by
   * GlusterFS from this machine (bucket-server.ts) and mounted for the app by a holder on each
   * node, this one included (node-bucket-mounts.ts). A node that cannot mount one fails the
   * start saying why.
   */
  private async mountBuckets(sandbox: SandboxIdentity): Promise<void> {
    const buckets = sandbox.buckets;
    if (!buckets || buckets.length === 0) return;
    if (!this.bucketServer)
      throw new Error(
        'FS buckets on the Swarm backend need an address the nodes reach this machine at: start the daemon with --swarm-bucket-server <address> (docs/swarm.md, "FS buckets").',
      );
    const nodes = [{ nodeId: this.node!.nodeId, api: this.o.api }, ...(await this.services.nodes.declared())];
    for (const bucket of buckets) {
      const exported = await this.bucketServer.ensure(bucket);
      for (const { nodeId, api } of nodes) await this.nodeBuckets.ensure(nodeId, api, exported, sandbox.user.uid);
    }
  }

  list(): Instance[] {
    return [...this.instances.values()];
  }

  async stopAll(graceMs?: number): Promise<void> {
    await Promise.all([...this.instances.values()].map((i) => i.stop(graceMs)));
  }

  /**
   * Ends the one-off commands running (SIGKILL, then their jobs go): the daemon stops, and each
   * holds its session with the API open until it ends.
   */
  async endOneOffs(): Promise<void> {
    await Promise.all(
      [...this.oneOffs].map(async (run) => {
        await run.signal('SIGKILL').catch(() => undefined);
        await Promise.race([run.done.catch(() => undefined), new Promise((r) => setTimeout(r, 10_000).unref())]);
      }),
    );
  }

  /**
   * Swarm keeps the instances' and workers' services running, and their labels say who holds
   * each slot: the daemon stops following them and forgets them. One-off commands are the
   * control plane's work: they end here, as their sessions with the daemon do.
   */
  async detach(): Promise<void> {
    await this.endOneOffs();
    for (const release of this.releases.values()) release.detach();
    for (const instance of this.instances.values()) instance.release.detach();
    this.releases.clear();
    this.instances.clear();
    this.found = [];
  }

  /**
   * The instances an earlier daemon left running, from the services init() kept: each slot
   * whose label names an instance, and that has a task meant to run, is one. `claim` says
   * whether it serves its app's current release: then it is adopted as its task runs (its
   * lines and tasks followed from now on, its workers with it), otherwise it is stopped with its
   * workers. A slot nobody's label names (its instance never finished starting) is stopped, and
   * a service with no slot left is removed.
   */
  async adoptAll(claim: (found: FoundInstance) => InstanceCallbacks | undefined): Promise<Instance[]> {
    if (!this.node) throw new Error('SwarmBackend.init() must be called (and awaited) before use.');
    const found = this.found;
    this.found = [];
    const serving = await adoptFound(
      {
        services: this.services,
        instances: this.instances,
        newInstance: (spec, release) => this.newInstance(spec, release),
        resumeService: (f) => this.resumeService(f),
        log: this.log,
      },
      found,
      claim,
    );
    const held = new Set(serving.map((i) => i.address));
    const released = [...this.foundAddresses].filter((address) => !held.has(address));
    this.foundAddresses = new Set();
    // The tasks not adopted are gone now: their addresses reach nothing any more.
    for (const address of released) await this.networkEvents?.detached(address).catch(() => undefined);
    return serving;
  }

  /**
   * The running tasks of the services found keep reaching their add-ons while the daemon starts
   * (the firewall's table was made anew): told now, before adoption takes them one by one.
   */
  private async attachFound(): Promise<void> {
    this.foundAddresses = new Set();
    for (const f of this.found) {
      const tasks = await this.services.tasks(f.id).catch(() => [] as SwarmTask[]);
      for (const task of tasks.filter((t) => t.Status.State === 'running' && t.Status.ContainerStatus?.ContainerID)) {
        const address = await this.services.containerAddress(task, this.network.name).catch(() => undefined);
        if (!address) continue;
        this.foundAddresses.add(address);
        await this.networkEvents
          ?.attached({ appId: f.appId, kind: 'instance', address })
          .catch((e: Error) => this.log(`could not allow the add-ons to the task at ${address}: ${e.message}`));
      }
    }
  }

  /** A service of an earlier daemon, followed again; new replicas of its release join it. */
  private resumeService(f: FoundService): ReleaseService {
    const release = new ReleaseService(this.services, f.key, f.name, f.marker, f.user, () => {
      throw new Error(`Swarm service ${f.name} exists already.`);
    });
    release.resume(f);
    if (!this.releases.has(f.key)) this.releases.set(f.key, release);
    return release;
  }

  /** Removes the instances' network (uninstall, tests). Stop the instances first. */
  async removeNetwork(): Promise<void> {
    if (this.instances.size > 0)
      throw new Error(`Cannot remove network ${this.network.name}: ${this.instances.size} instance(s) still running.`);
    // The FS buckets' mounts on the nodes, then their server: the buckets unmount after this.
    const nodes = [{ nodeId: this.node?.nodeId ?? 'manager', api: this.o.api }, ...(await this.services.nodes.declared().catch(() => []))];
    for (const { nodeId, api } of nodes)
      await this.nodeBuckets
        .removeAll(nodeId, api)
        .catch((e: Error) => this.log(`could not remove the FS bucket mounts of swarm node ${nodeId}: ${e.message}`));
    await this.bucketServer?.stop();
    await this.network.remove();
  }

  /**
   * A worker: one replica of the service its release has for this process type (instances
   * of a release share it as they share the release's service), restarted by its own policy.
   */
  private async startWorker(spec: InstanceSpec, image: string, worker: WorkerSpec, index: number): Promise<SwarmWorker> {
    const key = workerKey(spec, image, worker, index);
    const service = this.serviceFor(key, 'w', (s) => workerServiceInput(s, spec, image, key, worker));
    const started = new SwarmWorker(this.services, worker, service, (stream, line) => spec.onLog(stream, line));
    try {
      await started.start(identityFile(spec.env), this.o.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS, holderOf(spec));
    } finally {
      // A worker that could not join leaves its service as a stopped instance would.
      if (started.slot === undefined) await started.stop(0).catch(() => undefined);
    }
    return started;
  }
}
