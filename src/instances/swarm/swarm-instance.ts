import type { Instance, InstanceSpec, InstanceState, LogStream } from '../backend.js';
import { NS_PER_MS } from './service-spec.js';
import type { SwarmWorker } from './swarm-worker.js';
import { TERMINAL_STATES, describeTaskEnd, type SwarmServices, type SwarmTask } from './swarm-services.js';

export const INSTANCE_PORT = 8080;
const DEFAULT_GRACE_MS = 10_000;
const POLL_MS = 250;
/** Lines a task printed just before it ended may reach the log stream a moment after its end. */
const LOG_SETTLE_MS = 400;

/** What an instance needs from the backend that owns it. */
export interface SwarmInstanceHost {
  services: SwarmServices;
  network: string;
  /** Cuts the running task's container off the other tasks on the bridge. */
  isolate(containerId: string): Promise<void>;
  /** Told when the instance holds an address, and when it gives it back. */
  attached(instance: SwarmInstance, address: string): Promise<void>;
  detached(instance: SwarmInstance, address: string): Promise<void>;
  forget(instance: SwarmInstance): void;
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/**
 * One instance as a Swarm service of one replica. Swarm restarts its task after a crash; this
 * object watches the tasks to tell the app's log and the runtime about crashes, restarts and the
 * address the router reaches the running task at.
 */
export class SwarmInstance implements Instance {
  readonly id: string;
  readonly port = INSTANCE_PORT;

  private currentState: InstanceState = 'starting';
  private currentAddress = '';
  private restartCount = 0;
  private memory: number | undefined;
  private stopping: Promise<void> | undefined;
  private poller: NodeJS.Timeout | undefined;
  private logs: { close(): void; ended: Promise<void> } | undefined;
  /** Tasks whose end was already told, and the task that runs now. */
  private readonly ended = new Set<string>();
  private runningTask: string | undefined;
  private readonly seen = new Set<string>();
  private readonly workers: SwarmWorker[] = [];
  private lastEndAt = Date.now();
  private startedAt = Date.now();

  constructor(
    private readonly host: SwarmInstanceHost,
    readonly spec: InstanceSpec,
    readonly serviceId: string,
    readonly serviceName: string,
  ) {
    this.id = spec.instanceId;
  }

  get address(): string {
    return this.currentAddress;
  }

  state(): InstanceState {
    return this.currentState;
  }

  restarts(): number {
    return this.restartCount;
  }

  memoryUsage(): number | undefined {
    return this.currentState === 'running' ? this.memory : undefined;
  }

  /** Follows the service's logs and waits until its first task runs with an address. */
  async launch(timeoutMs: number): Promise<void> {
    this.logs = await this.host.services.followLogs(this.serviceId, (stream, line) => this.log(stream, line));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.stopping) throw new Error('instance stopped while starting');
      const tasks = await this.host.services.tasks(this.serviceId);
      for (const task of tasks) this.seen.add(task.ID);
      const running = tasks.find((t) => t.Status.State === 'running');
      const containerId = running?.Status.ContainerStatus?.ContainerID;
      if (running && containerId) {
        const address = await this.host.services.containerAddress(containerId, this.host.network);
        if (address) {
          await this.becameRunning(running, address);
          break;
        }
      }
      const failed = tasks.find((t) => t.Status.State === 'rejected' || (t.Status.Err && TERMINAL_STATES.has(t.Status.State)));
      if (failed && failed.Status.State === 'rejected') throw new Error(`Swarm could not start the instance: ${failed.Status.Err ?? failed.Status.Message ?? 'rejected'}.`);
      if (Date.now() > deadline) {
        const last = tasks.at(-1);
        throw new Error(`The instance's task did not run within ${seconds(timeoutMs)}${last ? ` (task ${last.Status.State}: ${last.Status.Err ?? last.Status.Message ?? ''})` : ''}.`);
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    this.log(
      'system',
      `started ${JSON.stringify(this.spec.command)} (swarm service ${this.serviceName}, uid ${this.spec.sandbox.user.uid}, ${this.spec.sandbox.flavor}), reachable at ${this.currentAddress}:${this.port}`,
    );
    this.poller = setInterval(() => void this.watch().catch(() => undefined), POLL_MS);
  }

  /** Workers started beside this instance: they stop with it. */
  addWorker(worker: SwarmWorker): void {
    this.workers.push(worker);
  }

  stop(graceMs = DEFAULT_GRACE_MS): Promise<void> {
    this.stopping ??= this.stopNow(graceMs);
    return this.stopping;
  }

  private log(stream: LogStream, line: string): void {
    try {
      this.spec.onLog(stream, line);
    } catch {
      // A failing log sink must not take supervision down with it.
    }
  }

  private setState(state: InstanceState): void {
    if (this.currentState === state) return;
    this.currentState = state;
    try {
      this.spec.onStateChange?.(state);
    } catch {
      // A failing listener must not take supervision down with it.
    }
  }

  private async becameRunning(task: SwarmTask, address: string): Promise<void> {
    const containerId = task.Status.ContainerStatus?.ContainerID;
    if (containerId) await this.host.isolate(containerId);
    this.runningTask = task.ID;
    this.startedAt = Date.now();
    if (address !== this.currentAddress) {
      if (this.currentAddress) await this.host.detached(this, this.currentAddress).catch(() => undefined);
      this.currentAddress = address;
      await this.host.attached(this, address);
    }
    this.setState('running');
  }

  /** One look at the service's tasks: tells crashes and restarts, follows the running task. */
  private async watch(): Promise<void> {
    if (this.stopping) return;
    const tasks = await this.host.services.tasks(this.serviceId);
    if (this.stopping) return;
    for (const task of tasks) this.seen.add(task.ID);
    // Each task after the first is Swarm's restart of the instance.
    this.restartCount = Math.max(this.restartCount, this.seen.size - 1);
    for (const task of tasks) {
      if (!TERMINAL_STATES.has(task.Status.State) || this.ended.has(task.ID)) continue;
      this.ended.add(task.ID);
      const uptime = Date.now() - this.startedAt;
      this.lastEndAt = Date.now();
      // Give the last lines of the ended task a moment to arrive before the crash message.
      await new Promise((r) => setTimeout(r, LOG_SETTLE_MS));
      if (this.stopping) return;
      this.setState('crashed');
      this.log('system', `crashed: the process ${describeTaskEnd(task)} after ${seconds(uptime)}`);
      this.setState('restarting');
      this.log('system', `restarting: Swarm starts a new task (restart #${this.seen.size})`);
    }
    const running = tasks.filter((t) => t.Status.State === 'running' && t.DesiredState === 'running').at(-1);
    if (running && running.ID !== this.runningTask) {
      const containerId = running.Status.ContainerStatus?.ContainerID;
      const address = containerId ? await this.host.services.containerAddress(containerId, this.host.network).catch(() => undefined) : undefined;
      if (address && !this.stopping) {
        await this.becameRunning(running, address);
        this.log('system', `running again at ${address}:${this.port} after ${seconds(Date.now() - this.lastEndAt)}`);
      }
    }
    const containerId = running?.Status.ContainerStatus?.ContainerID;
    if (containerId && this.currentState === 'running') this.memory = await this.host.services.memoryUsage(containerId).catch(() => undefined);
  }

  /**
   * Scales the service to none: Swarm sends SIGTERM to the task. Its stop grace is fixed when the
   * task is made (changing it would replace the task), so SIGKILL after this stop's own grace
   * is sent here, through the API of the node the task runs on. Then the service is removed.
   */
  private async stopNow(graceMs: number): Promise<void> {
    this.setState('stopping');
    this.log('system', `stopping: sending SIGTERM, killing after ${seconds(graceMs)}`);
    clearInterval(this.poller);
    const workersStopped = Promise.all(this.workers.map((w) => w.stop(graceMs).catch((e: Error) => this.log('system', `stopping a worker failed: ${e.message}`))));
    const started = Date.now();
    let last: SwarmTask | undefined;
    let killed = false;
    try {
      // No replica wanted first, so that Swarm does not replace the task the SIGTERM ends.
      await this.host.services.update(this.serviceId, (spec) => {
        if (spec.Mode?.Replicated) spec.Mode.Replicated.Replicas = 0;
      });
      // SIGTERM at once through the node's API: Swarm's own comes only when the scale-down
      // reaches the node, which may be later than a short grace.
      for (const t of await this.host.services.tasks(this.serviceId)) {
        const containerId = t.Status.ContainerStatus?.ContainerID;
        if (containerId && t.Status.State === 'running') await this.host.services.kill(containerId, 'SIGTERM').catch(() => undefined);
      }
      const deadline = Date.now() + graceMs + 30_000;
      for (;;) {
        const tasks = await this.host.services.tasks(this.serviceId);
        const live = tasks.filter((t) => !TERMINAL_STATES.has(t.Status.State));
        last = tasks.filter((t) => t.Status.ContainerStatus?.ContainerID).at(-1) ?? last;
        if (live.length === 0 || Date.now() > deadline) break;
        if (!killed && Date.now() - started >= graceMs) {
          killed = true;
          for (const t of live) {
            const containerId = t.Status.ContainerStatus?.ContainerID;
            if (containerId) await this.host.services.kill(containerId, 'SIGKILL').catch(() => undefined);
          }
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      await new Promise((r) => setTimeout(r, LOG_SETTLE_MS));
    } catch (error) {
      this.log('system', `stopping the swarm service failed: ${(error as Error).message}; removing it`);
    }
    const took = Date.now() - started;
    const code = last?.Status.ContainerStatus?.ExitCode;
    if (last && (killed || code === 137 || (code === undefined && took >= graceMs))) {
      this.log('system', `killed (SIGKILL) after a grace of ${seconds(graceMs)}: the process did not exit on SIGTERM`);
    } else if (last) {
      this.log('system', `process ended after SIGTERM (${describeTaskEnd(last)})`);
    }
    await workersStopped;
    this.logs?.close();
    await this.host.services.remove(this.serviceId).catch((e: Error) => this.log('system', `could not remove the swarm service: ${e.message}`));
    if (this.currentAddress) await this.host.detached(this, this.currentAddress).catch(() => undefined);
    this.host.forget(this);
    this.setState('stopped');
    this.log('system', 'stopped');
  }
}
