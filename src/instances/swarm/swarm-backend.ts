import type { FoundInstance, Instance, InstanceBackend, InstanceCallbacks, InstanceSpec, OneOffSpec, WorkerSpec } from '../backend.js';
import type { Sandbox } from '../../sandbox/sandbox-host.js';
import { ONE_OFF_HOLDER, startOneOffTask } from './one-off-task.js';
import { SwarmWorker } from './swarm-worker.js';
import { runCommand } from '../../executor/run-command.js';
import { isolateTaskPort } from './port-isolation.js';
import type { SandboxNetworkEvents } from '../local/local-netns-backend.js';
import { DockerApiError, type DockerApi } from './docker-api.js';
import { checkSwarmManager, type SwarmNode } from './swarm-checks.js';
import { ReleaseImages } from './release-images.js';
import { LABEL_OWNER, serviceName, serviceSpec, validateOwner, type ServiceSpecInput } from './service-spec.js';
import { SwarmServices, meantToRun, type SwarmTask } from './swarm-services.js';
import { adoptionLabels, readFoundService, type FoundService, type ListedService, type SlotHolder } from './adoption.js';
import { NODE_API_LABEL } from './node-apis.js';
import { NodeFilter } from './node-filter.js';
import { SwarmInstance } from './swarm-instance.js';
import { ReleaseService } from './release-service.js';
import {
  IDENTITY_MOUNT,
  PER_INSTANCE_VARIABLES,
  SLOT_VARIABLE,
  identityFile,
  perInstanceVariables,
  taskEntrypoint,
} from './task-entrypoint.js';
import { createHash, randomBytes } from 'node:crypto';
import { usedToolchainFolders } from './toolchain-folders.js';

export interface SwarmBackendOptions {
  api: DockerApi;
  /** host:port of the registry the nodes pull from. */
  registry: string;
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
  /** How long a task may take to be scheduled, pull its image and run. */
  startTimeoutMs?: number;
  restartDelayMs?: number;
  log?(line: string): void;
}

const DEFAULT_START_TIMEOUT_MS = 120_000;
const BRIDGE_NAME_OPTION = 'com.docker.network.bridge.name';
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
  readonly networkName: string;
  /** What the firewall filters: the bridge of the tasks' network on this node. */
  readonly bridgeName: string;
  /** The node's address on the instances' network: where tasks reach this machine. */
  readonly gatewayAddress: string;

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
  private readonly log: (line: string) => void;

  constructor(private readonly o: SwarmBackendOptions) {
    this.owner = validateOwner(o.owner);
    this.services = new SwarmServices(o.api);
    this.log = o.log ?? (() => undefined);
    this.images = new ReleaseImages({ api: o.api, registry: o.registry, namespace: this.owner, log: this.log });
    this.networkName = `${this.owner}-instances`;
    this.bridgeName = o.bridgeName ?? `${this.owner.slice(0, 12)}sw0`;
    if (!/^[A-Za-z0-9_-]{1,15}$/.test(this.bridgeName))
      throw new Error(`Invalid bridge name ${JSON.stringify(this.bridgeName)}: up to 15 letters, digits, "_" or "-".`);
    this.gatewayAddress = gatewayOf(o.subnet);
    this.networkEvents = o.networkEvents;
    this.nodeFilter = new NodeFilter({
      manager: o.api,
      registry: o.registry,
      owner: this.owner,
      networkName: this.networkName,
      controlMachine: o.controlMachineAddress ?? this.gatewayAddress,
      log: this.log,
    });
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
    await this.ensureNetwork();
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
    await this.ip(['route', 'replace', ...this.fallbackRoute()]);
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

    const image = await this.images.releaseImage({
      appId: spec.appId,
      deploymentId: spec.deploymentId,
      releaseDir: spec.releaseDir,
      readOnlyPaths: usedToolchainFolders(spec.sandbox.readOnlyPaths, spec.env),
      user: spec.sandbox.user,
    });
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

  private newInstance(spec: InstanceSpec, release: ReleaseService): SwarmInstance {
    const instance = new SwarmInstance(
      {
        services: this.services,
        network: this.networkName,
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
    return this.serviceFor(key, 'r', (name, marker) => ({
      name,
      owner: this.owner,
      role: 'instance',
      adoption: adoptionLabels(key, marker, adoptionSpec(spec)),
      appId: spec.appId,
      deploymentId: spec.deploymentId,
      image,
      command: taskEntrypoint({ marker, beforeStart: spec.beforeStart, command: spec.command, env: spec.env }),
      entrypoint: true,
      identityMount: IDENTITY_MOUNT,
      env: { ...sharedEnv(spec.env), [SLOT_VARIABLE]: '{{.Task.Slot}}' },
      workingDir: spec.releaseDir,
      sandbox: spec.sandbox,
      network: this.networkName,
      restartDelayMs: this.o.restartDelayMs ?? DEFAULT_RESTART_DELAY_MS,
      stopGraceMs: 10_000,
    }));
  }

  /** The open service of `key`, or a new one (the previous one is closing: its last replica stops). */
  private serviceFor(key: string, kind: 'r' | 'w', specOf: (name: string, marker: string) => ServiceSpecInput): ReleaseService {
    const current = this.releases.get(key);
    if (current && !current.closing) return current;
    for (const [k, done] of this.releases) if (done.closing && done.holders() === 0) this.releases.delete(k);
    const name = serviceName(this.owner, kind, key, `${this.run}-${this.generation++}`);
    const marker = `slipway-${randomBytes(8).toString('hex')}`;
    const spec = specOf(name, marker);
    const user = `${spec.sandbox.user.uid}:${spec.sandbox.user.gid}`;
    const release = new ReleaseService(this.services, key, name, marker, user, (replicas) => serviceSpec({ ...spec, replicas }));
    this.releases.set(key, release);
    return release;
  }

  /** A one-off command as a Swarm job of the release's image (one-off-task.ts). */
  async runOnce(spec: OneOffSpec): Promise<Sandbox> {
    if (!this.node) throw new Error('SwarmBackend.init() must be called (and awaited) before use.');
    const image = await this.images.releaseImage({
      appId: spec.appId,
      deploymentId: spec.deploymentId,
      releaseDir: spec.releaseDir,
      readOnlyPaths: usedToolchainFolders(spec.sandbox.readOnlyPaths, spec.env),
      user: spec.sandbox.user,
    });
    const serviceId = await this.services.create(
      serviceSpec({
        name: serviceName(this.owner, 'o', `${spec.appId}\n${randomBytes(8).toString('hex')}`),
        owner: this.owner,
        role: 'run',
        job: true,
        appId: spec.appId,
        deploymentId: spec.deploymentId,
        image,
        // The command runs beside the holder, as an exec with its standard input (one-off-task.ts).
        command: ONE_OFF_HOLDER,
        entrypoint: true,
        env: spec.env,
        workingDir: spec.releaseDir,
        sandbox: spec.sandbox,
        network: this.networkName,
        restartDelayMs: 0,
        stopGraceMs: 10_000,
      }),
    );
    const started = await startOneOffTask(
      {
        services: this.services,
        network: this.networkName,
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
        throw new Error(`Swarm node ${task.NodeID} runs a task but has no configuration network ${this.networkName}-config to filter.`);
      return;
    }
    await isolateTaskPort(this.o.api, containerId);
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
    const adopted: Array<{ instance: SwarmInstance; tasks: SwarmTask[] }> = [];
    const ending: Array<{ stop(graceMs: number): Promise<void> }> = [];
    const empty: ReleaseService[] = [];
    const slotsOf = async (release: ReleaseService, f: FoundService) => {
      const tasks = await release.tasks().catch(() => [] as SwarmTask[]);
      const wanted = (slot: number) => tasks.some((t) => t.Slot === slot && meantToRun(t));
      const slots = [...new Set(tasks.flatMap((t) => (t.Slot === undefined ? [] : [t.Slot])))].filter(wanted);
      return { tasks, slots, holder: (slot: number) => f.holders.get(slot) };
    };
    for (const f of found.filter((s) => s.role === 'instance')) {
      const release = this.resumeService(f);
      const { tasks, slots, holder } = await slotsOf(release, f);
      for (const slot of slots) {
        const h = holder(slot);
        const known = h !== undefined && !this.instances.has(h.instanceId);
        const callbacks = known ? claim({ appId: f.appId, deploymentId: f.deploymentId, ...pick(h) }) : undefined;
        const spec: InstanceSpec = {
          appId: f.appId,
          deploymentId: f.deploymentId,
          instanceId: known ? h.instanceId : `${f.name}.${slot}`,
          instanceNumber: known ? h.instanceNumber : slot - 1,
          releaseDir: f.spec.releaseDir,
          beforeStart: f.spec.beforeStart,
          command: f.spec.command,
          env: { ...f.env, ...(known ? h.vars : {}) },
          sandbox: f.spec.sandbox,
          onLog: () => undefined,
          ...callbacks,
        };
        const instance = this.newInstance(spec, release);
        release.hold(slot, instance, known ? identityFile(h.vars) : 'exit 0\n', known ? h : undefined);
        instance.slot = slot;
        const slotTasks = tasks.filter((t) => t.Slot === slot);
        if (callbacks) adopted.push({ instance, tasks: slotTasks });
        else ending.push(instance);
      }
      if (slots.length === 0) empty.push(release);
    }
    for (const f of found.filter((s) => s.role === 'worker')) {
      const release = this.resumeService(f);
      const { tasks, slots, holder } = await slotsOf(release, f);
      for (const slot of slots) {
        const h = holder(slot);
        const instance = h && this.instances.get(h.instanceId);
        const worker = new SwarmWorker(this.services, f.spec.worker!, release, (stream, line) => {
          try {
            instance?.spec.onLog(stream, line);
          } catch {
            // A failing log sink must not take supervision down with it.
          }
        });
        release.hold(slot, worker, h ? identityFile(h.vars) : 'exit 0\n', h);
        worker.adopt(
          slot,
          tasks.filter((t) => t.Slot === slot),
        );
        if (instance) {
          instance.addWorker(worker);
          instance.spec.workers = [...(instance.spec.workers ?? []), f.spec.worker!];
        } else ending.push(worker);
      }
      if (slots.length === 0) empty.push(release);
    }
    const serving: SwarmInstance[] = [];
    for (const { instance, tasks } of adopted) {
      try {
        await instance.adopt(instance.slot!, tasks);
        serving.push(instance);
      } catch (error) {
        this.log(`could not adopt instance ${instance.id} (swarm service ${instance.serviceName}): ${(error as Error).message}`);
        ending.push(instance);
      }
    }
    if (found.length) this.log(`adopted ${serving.length} instance(s) from ${found.length} swarm service(s) of a previous run`);
    const held = new Set(serving.map((i) => i.address));
    const released = [...this.foundAddresses].filter((address) => !held.has(address));
    this.foundAddresses = new Set();
    await Promise.all([
      ...ending.map((e) => e.stop(10_000).catch((error: Error) => this.log(`could not stop a leftover replica: ${error.message}`))),
      ...empty.map(async (release) => {
        this.log(`removing swarm service ${release.name}: none of its replicas runs`);
        await release.remove().catch((error: Error) => this.log(`could not remove swarm service ${release.name}: ${error.message}`));
      }),
    ]);
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
        const address = await this.services.containerAddress(task, this.networkName).catch(() => undefined);
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

  /**
   * Docker removes a node's bridge with its last container: without this route, the tasks'
   * addresses would then be sent to the default gateway, off the machine. Unreachable instead;
   * the bridge's own route (and on a multi-node swarm, each node's) is more specific or cheaper.
   */
  private fallbackRoute(): string[] {
    return ['unreachable', this.o.subnet, 'metric', '4242'];
  }

  private async ip(args: string[]): Promise<void> {
    const errors: string[] = [];
    const r = await runCommand({
      argv: ['ip', ...args],
      cwd: '/',
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' },
      timeoutMs: 10_000,
      onLine: (_s, l) => errors.push(l),
    });
    if (r.exitCode !== 0) throw new Error(`Could not set the route of the tasks' network (\`ip ${args.join(' ')}\`): ${errors.join(' ')}`);
  }

  /** Removes the instances' network (uninstall, tests). Stop the instances first. */
  async removeNetwork(): Promise<void> {
    if (this.instances.size > 0)
      throw new Error(`Cannot remove network ${this.networkName}: ${this.instances.size} instance(s) still running.`);
    for (const name of [this.networkName, `${this.networkName}-config`]) {
      // The configuration stays "in use" for a moment after the swarm network is gone.
      for (let attempt = 0; ; attempt++) {
        try {
          await this.o.api.json({ method: 'DELETE', path: `/networks/${name}`, what: `remove network ${name}` });
          break;
        } catch (e) {
          if (e instanceof DockerApiError && e.status === 404) break;
          if (attempt >= 40) throw e;
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    }
    await this.ip(['route', 'del', ...this.fallbackRoute()]).catch(() => undefined);
  }

  /**
   * A worker: one replica of the service its release has for this process type (instances
   * of a release share it as they share the release's service), restarted by its own policy.
   */
  private async startWorker(spec: InstanceSpec, image: string, worker: WorkerSpec, index: number): Promise<SwarmWorker> {
    const shared = sharedEnv(spec.env);
    const key = createHash('sha256')
      .update(JSON.stringify([releaseKey(spec, image), 'worker', index, worker]))
      .digest('hex');
    const service = this.serviceFor(key, 'w', (name, marker) => ({
      name,
      owner: this.owner,
      role: 'worker',
      adoption: adoptionLabels(key, marker, { ...adoptionSpec(spec), worker }),
      restart: worker.restart,
      appId: spec.appId,
      deploymentId: spec.deploymentId,
      image,
      command: taskEntrypoint({ marker, beforeStart: [], command: worker.command, env: spec.env }),
      entrypoint: true,
      identityMount: IDENTITY_MOUNT,
      env: { ...shared, [SLOT_VARIABLE]: '{{.Task.Slot}}' },
      workingDir: spec.releaseDir,
      sandbox: spec.sandbox,
      network: this.networkName,
      restartDelayMs: worker.restartDelayMs,
      stopGraceMs: 10_000,
    }));
    const started = new SwarmWorker(this.services, worker, service, (stream, line) => spec.onLog(stream, line));
    try {
      await started.start(identityFile(spec.env), this.o.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS, holderOf(spec));
    } finally {
      // A worker that could not join leaves its service as a stopped instance would.
      if (started.slot === undefined) await started.stop(0).catch(() => undefined);
    }
    return started;
  }

  /**
   * The instances' network: a bridge on each node, made a swarm network so services can join
   * it. Its address range comes from a configuration network (on a multi-node swarm each node
   * has its own range: docs/swarm.md).
   */
  private async ensureNetwork(): Promise<void> {
    const configName = `${this.networkName}-config`;
    const exists = async (name: string) =>
      this.o.api.json({ path: `/networks/${name}`, what: `inspect network ${name}` }).then(
        () => true,
        (e) => {
          if (e instanceof DockerApiError && e.status === 404) return false;
          throw e;
        },
      );
    if (await exists(configName)) {
      const config = await this.o.api.json<{ Options?: Record<string, string> }>({
        path: `/networks/${configName}`,
        what: `inspect network ${configName}`,
      });
      const bridge = config.Options?.[BRIDGE_NAME_OPTION];
      if (bridge !== this.bridgeName) {
        throw new Error(
          `Network ${configName} names the bridge ${JSON.stringify(bridge ?? '(none)')}, not ${this.bridgeName} which the firewall filters. ` +
            `Remove it (docker network rm ${this.networkName} ${configName}) and start again.`,
        );
      }
    } else {
      await this.o.api.json({
        method: 'POST',
        path: '/networks/create',
        body: {
          Name: configName,
          ConfigOnly: true,
          // The control machine's tasks take the lower half; other nodes' parts come from the upper one (docs/swarm.md).
          IPAM: { Config: [{ Subnet: this.o.subnet, IPRange: lowerHalf(this.o.subnet), Gateway: this.gatewayAddress }] },
          Options: { [BRIDGE_NAME_OPTION]: this.bridgeName },
          Labels: { [LABEL_OWNER]: this.owner },
        },
        what: `create the configuration of network ${this.networkName}`,
      });
    }
    if (!(await exists(this.networkName))) {
      await this.o.api.json({
        method: 'POST',
        path: '/networks/create',
        body: { Name: this.networkName, Driver: 'bridge', Scope: 'swarm', ConfigFrom: { Network: configName } },
        what: `create network ${this.networkName}`,
      });
    }
  }
}

/** The environment the replicas of a service share: all but the instance's identity. */
function sharedEnv(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !(PER_INSTANCE_VARIABLES as readonly string[]).includes(k)));
}

/** What a service's label keeps of the spec of its replicas (adoption.ts). */
function adoptionSpec(spec: InstanceSpec) {
  return { releaseDir: spec.releaseDir, command: spec.command, beforeStart: spec.beforeStart, sandbox: spec.sandbox };
}

function holderOf(spec: InstanceSpec): SlotHolder {
  return { instanceId: spec.instanceId, instanceNumber: spec.instanceNumber, vars: perInstanceVariables(spec.env) };
}

function pick(h: SlotHolder): Pick<FoundInstance, 'instanceId' | 'instanceNumber'> {
  return { instanceId: h.instanceId, instanceNumber: h.instanceNumber };
}

/** What the instances of one release share, digested: they are the replicas of one service. */
function releaseKey(spec: InstanceSpec, image: string): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        spec.appId,
        spec.deploymentId,
        spec.releaseDir,
        image,
        spec.command,
        spec.beforeStart,
        sharedEnv(spec.env),
        spec.sandbox,
      ]),
    )
    .digest('hex');
}

/** The lower half of a /16: the addresses the control machine's own tasks get. */
function lowerHalf(subnet: string): string {
  return subnet.replace(/\/16$/, '/17');
}

function gatewayOf(subnet: string): string {
  const m = /^(\d{1,3})\.(\d{1,3})\.0\.0\/16$/.exec(subnet);
  if (!m) throw new Error(`The swarm instances' subnet must be a /16 such as 172.31.0.0/16, not ${JSON.stringify(subnet)}.`);
  return `${m[1]}.${m[2]}.0.1`;
}
