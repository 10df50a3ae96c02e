import type { CpuReading, Instance, InstanceSpec, InstanceState, LogStream } from '../backend.js';
import type { SwarmWorker } from './swarm-worker.js';
import type { ReleaseService, Replica } from './release-service.js';
import type { EntrypointEvent } from './task-entrypoint.js';
import { identityFile, perInstanceVariables } from './task-entrypoint.js';
import { TERMINAL_STATES, describeTaskEnd, meantToRun, type SwarmServices, type SwarmTask } from './swarm-services.js';

export const INSTANCE_PORT = 8080;
const DEFAULT_GRACE_MS = 10_000;
const POLL_MS = 250;
/** Lines a task printed just before it ended may reach the log stream a moment after its end. */
const LOG_SETTLE_MS = 400;
/** How long Swarm may take to take away the slot of a stopped replica. */
const SLOT_REMOVAL_MS = 15_000;

/** What an instance needs from the backend that owns it. */
export interface SwarmInstanceHost {
  services: SwarmServices;
  network: string;
  /** Cuts the running task's container off the other tasks on its node's bridge. */
  isolate(task: SwarmTask): Promise<void>;
  /** Told when the instance holds an address, and when it gives it back. */
  attached(instance: SwarmInstance, address: string): Promise<void>;
  detached(instance: SwarmInstance, address: string): Promise<void>;
  forget(instance: SwarmInstance): void;
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

const live = (t: SwarmTask) => !TERMINAL_STATES.has(t.Status.State);

/**
 * One instance as one replica (one slot) of its release's Swarm service. Swarm restarts the
 * slot's task after a crash; this object follows the slot's tasks to tell the app's log and the
 * runtime about crashes, restarts and the address the router reaches the running task at.
 */
export class SwarmInstance implements Instance, Replica {
  readonly id: string;
  readonly port = INSTANCE_PORT;
  slot: number | undefined;

  private currentState: InstanceState = 'starting';
  private currentAddress = '';
  private restartCount = 0;
  private memory: number | undefined;
  /** The running task's CPU time, as its last stats read it. */
  private cpu: { seconds: number; at: number } | undefined;
  private stopping: Promise<void> | undefined;
  private launched = false;
  /** Tasks of the slot from before this instance held it: never ours. */
  private readonly before = new Set<string>();
  /** Tasks whose end was already told, and the task that runs now. */
  private readonly ended = new Set<string>();
  private runningTask: string | undefined;
  private readonly seen = new Set<string>();
  /** Tasks whose entrypoint said the app runs (the before-start commands succeeded). */
  private readonly started = new Set<string>();
  private readonly hookFailures = new Map<string, { index: number; code: number }>();
  private readonly workers: SwarmWorker[] = [];
  private lastEndAt = Date.now();
  private startedAt = Date.now();

  constructor(
    private readonly host: SwarmInstanceHost,
    readonly spec: InstanceSpec,
    readonly release: ReleaseService,
  ) {
    this.id = spec.instanceId;
  }

  get address(): string {
    return this.currentAddress;
  }

  get serviceName(): string {
    return this.release.name;
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

  /** The running task's CPU time and when Docker read it (the supervision reads its stats in turn). */
  cpuTime(): CpuReading | undefined {
    return this.currentState === 'running' ? this.cpu : undefined;
  }

  /**
   * Its workers' CPU time, summed over their running tasks as Docker last read them, and the latest
   * of those reads: a worker instance is scaled on it. A task that ended takes its time out of the
   * sum, which then goes back: the autoscaler gives that interval no rate.
   */
  workerCpuTime(): CpuReading | undefined {
    const readings = this.workers.flatMap((w) => (w.cpu ? [w.cpu] : []));
    if (readings.length === 0) return undefined;
    return { seconds: readings.reduce((sum, r) => sum + r.seconds, 0), at: Math.max(...readings.map((r) => r.at)) };
  }

  /** Adds a replica to the release's service, then waits until its task runs the app with an address. */
  async launch(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    this.slot = await this.release.addReplica(this, identityFile(this.spec.env), timeoutMs, {
      instanceId: this.spec.instanceId,
      instanceNumber: this.spec.instanceNumber,
      vars: perInstanceVariables(this.spec.env),
    });
    let first = true;
    for (;;) {
      if (this.stopping) throw new Error('instance stopped while starting');
      const slotTasks = (await this.release.tasks()).filter((t) => t.Slot === this.slot);
      if (first)
        for (const t of slotTasks) if (!live(t) || t.DesiredState === 'shutdown' || t.DesiredState === 'remove') this.before.add(t.ID);
      first = false;
      const tasks = slotTasks.filter((t) => !this.before.has(t.ID));
      for (const task of tasks) this.seen.add(task.ID);
      const problem = this.release.problem(this.slot);
      if (problem) throw new Error(problem);
      const running = tasks.find((t) => t.Status.State === 'running' && this.started.has(t.ID));
      if (running?.Status.ContainerStatus?.ContainerID) {
        const address = await this.host.services.containerAddress(running, this.host.network);
        if (address) {
          await this.becameRunning(running, address);
          break;
        }
      }
      const rejected = tasks.find((t) => t.Status.State === 'rejected');
      if (rejected) throw new Error(`Swarm could not start the instance: ${rejected.Status.Err ?? rejected.Status.Message ?? 'rejected'}.`);
      // A task of the slot that ended well before this instance saw it start the app is the slot's
      // previous holder's (its app ended on SIGTERM, or a retired slot's "exit 0"): Swarm starts
      // the slot's next task, which gets this instance's identity. Only this instance's own
      // failures end its start.
      for (const t of tasks) {
        if (!live(t) && !this.started.has(t.ID) && t.Status.ContainerStatus?.ExitCode === 0) {
          this.before.add(t.ID);
          this.seen.delete(t.ID);
        }
      }
      const ended = tasks.find((t) => !live(t) && !this.before.has(t.ID));
      if (ended) {
        // The marker of a failed before-start command comes through the logs: give it a moment.
        await new Promise((r) => setTimeout(r, LOG_SETTLE_MS));
        const hook = this.hookFailures.get(ended.ID);
        if (hook) {
          throw new Error(
            `Before-start command ${JSON.stringify(this.spec.beforeStart[hook.index])} exited with code ${hook.code}; the instance was not started. See its output above in the instance log.`,
          );
        }
        throw new Error(`The instance's task ${describeTaskEnd(ended)} before the app started; its output is above.`);
      }
      if (Date.now() > deadline) {
        const last = tasks.at(-1);
        throw new Error(
          `The instance's task did not run within ${seconds(timeoutMs)}${last ? ` (task ${last.Status.State}: ${last.Status.Err ?? last.Status.Message ?? ''})` : ''}.`,
        );
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    this.log(
      'system',
      `started ${JSON.stringify(this.spec.command)} (swarm service ${this.release.name}, replica ${this.slot}, uid ${this.spec.sandbox.user.uid}, ${this.spec.sandbox.flavor}), reachable at ${this.currentAddress}:${this.port}`,
    );
    this.launched = true;
  }

  /**
   * Takes over the slot an earlier daemon's instance held, as its tasks run: the ended ones are
   * its past (never told as crashes), the running one serves on, at its address, once its
   * entrypoint has started the app; one still starting, or restarting, is followed as after a
   * crash. The service's lines are followed from now on.
   */
  async adopt(slot: number, slotTasks: SwarmTask[]): Promise<void> {
    this.slot = slot;
    for (const t of slotTasks) {
      if (meantToRun(t)) this.seen.add(t.ID);
      else this.before.add(t.ID);
    }
    const running = slotTasks.find(
      (t) => t.Status.State === 'running' && t.DesiredState === 'running' && t.Status.ContainerStatus?.ContainerID,
    );
    const address = running && (await this.host.services.containerAddress(running, this.host.network).catch(() => undefined));
    if (running && address && (await this.release.hasStarted(running, slot))) {
      this.started.add(running.ID);
      await this.becameRunning(running, address);
    } else if (address) {
      // Still in its before-start commands: it keeps its add-on access, and is routed once it runs.
      this.currentAddress = address;
      await this.host.attached(this, address);
    }
    if (this.currentState !== 'running') this.setState('restarting');
    this.launched = true;
    this.log(
      'system',
      this.currentState === 'running'
        ? `adopted as it runs (swarm service ${this.release.name}, replica ${slot}), reachable at ${this.currentAddress}:${this.port}`
        : `adopted while its task starts (swarm service ${this.release.name}, replica ${slot})`,
    );
  }

  /** Workers started beside this instance: they stop with it. */
  addWorker(worker: SwarmWorker): void {
    this.workers.push(worker);
  }

  stop(graceMs = DEFAULT_GRACE_MS): Promise<void> {
    this.stopping ??= this.stopNow(graceMs);
    return this.stopping;
  }

  line(stream: LogStream, line: string, taskId: string): void {
    if (!this.before.has(taskId)) this.log(stream, line);
  }

  event(event: EntrypointEvent, taskId: string): void {
    if (this.before.has(taskId)) return;
    if (event.kind === 'started') this.started.add(taskId);
    else if (event.kind === 'before-start')
      this.log('system', `running before start: ${JSON.stringify(this.spec.beforeStart[event.index])}`);
    else {
      this.hookFailures.set(taskId, event);
      this.log('system', `before-start command ${JSON.stringify(this.spec.beforeStart[event.index])} exited with code ${event.code}`);
    }
  }

  /** One look at the slot's tasks: tells crashes and restarts, follows the running task. */
  async observe(slotTasks: SwarmTask[]): Promise<void> {
    if (this.stopping || !this.launched) return;
    const tasks = slotTasks.filter((t) => !this.before.has(t.ID));
    for (const task of tasks) this.seen.add(task.ID);
    // Each task after the first is Swarm's restart of the instance.
    this.restartCount = Math.max(this.restartCount, this.seen.size - 1);
    for (const task of tasks) {
      if (live(task) || this.ended.has(task.ID)) continue;
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
    const running = tasks.filter((t) => t.Status.State === 'running' && t.DesiredState === 'running' && this.started.has(t.ID)).at(-1);
    if (running && running.ID !== this.runningTask) {
      const address = running.Status.ContainerStatus?.ContainerID
        ? await this.host.services.containerAddress(running, this.host.network).catch(() => undefined)
        : undefined;
      if (address && !this.stopping) {
        await this.becameRunning(running, address);
        this.log('system', `running again at ${address}:${this.port} after ${seconds(Date.now() - this.lastEndAt)}`);
      }
    }
    if (running?.Status.ContainerStatus?.ContainerID && this.currentState === 'running') {
      const usage = await this.host.services.usage(running).catch(() => undefined);
      this.memory = usage?.memory;
      // A new task's count starts again: a reading of another task is not continued.
      this.cpu = usage?.cpu;
    }
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
    await this.host.isolate(task);
    this.runningTask = task.ID;
    this.startedAt = Date.now();
    if (address !== this.currentAddress) {
      if (this.currentAddress) await this.host.detached(this, this.currentAddress).catch(() => undefined);
      this.currentAddress = address;
      await this.host.attached(this, address);
    }
    this.setState('running');
  }

  private async slotTasks(): Promise<SwarmTask[]> {
    return (await this.release.tasks()).filter((t) => t.Slot === this.slot && !this.before.has(t.ID));
  }

  /**
   * SIGTERM to the slot's task at once, through the API of the node it runs on, SIGKILL after
   * this stop's own grace (a task's stop grace is fixed when the task is made). The replica is
   * taken away once its task has ended, so Swarm removes this slot and no other; the last
   * instance of the release scales the service to none first, so Swarm restarts nothing, and
   * removes the service.
   */
  private async stopNow(graceMs: number): Promise<void> {
    this.setState('stopping');
    this.log('system', `stopping: sending SIGTERM, killing after ${seconds(graceMs)}`);
    const workersStopped = Promise.all(
      this.workers.map((w) => w.stop(graceMs).catch((e: Error) => this.log('system', `stopping a worker failed: ${e.message}`))),
    );
    const started = Date.now();
    let last: SwarmTask | undefined;
    let killed = false;
    const slot = this.slot;
    const alone = this.release.leave();
    if (alone)
      await this.release.scaleToNone().catch((e: Error) => this.log('system', `scaling the swarm service to none failed: ${e.message}`));
    if (slot !== undefined) {
      try {
        const signalled = new Set<string>();
        const signal = async (tasks: SwarmTask[], name: 'SIGTERM' | 'SIGKILL') => {
          for (const t of tasks) {
            if (t.Status.ContainerStatus?.ContainerID && live(t)) {
              signalled.add(t.ID);
              await this.host.services.kill(t, name).catch(() => undefined);
            }
          }
        };
        await signal(await this.slotTasks(), 'SIGTERM');
        const deadline = Date.now() + graceMs + 30_000;
        for (;;) {
          const tasks = await this.slotTasks();
          last = tasks.filter((t) => t.Status.ContainerStatus?.ContainerID).at(-1) ?? last;
          // Alone, every task must end; otherwise the ones signalled (Swarm may make a new one in the slot meanwhile).
          const waiting = tasks.filter((t) => live(t) && (alone || signalled.has(t.ID) || signalled.size === 0));
          if (waiting.length === 0 || Date.now() > deadline) break;
          if (!killed && Date.now() - started >= graceMs) {
            killed = true;
            await signal(waiting, 'SIGKILL');
          }
          await new Promise((r) => setTimeout(r, 50));
        }
        if (!alone) {
          await this.release.removeReplica(slot);
          await this.waitForSlotRemoval();
        }
        await new Promise((r) => setTimeout(r, LOG_SETTLE_MS));
      } catch (error) {
        this.log('system', `stopping the swarm task failed: ${(error as Error).message}`);
      }
    }
    if (!alone) this.release.left();
    const took = Date.now() - started;
    const code = last?.Status.ContainerStatus?.ExitCode;
    if (last && (killed || code === 137 || (code === undefined && took >= graceMs))) {
      this.log('system', `killed (SIGKILL) after a grace of ${seconds(graceMs)}: the process did not exit on SIGTERM`);
    } else if (last) {
      this.log('system', `process ended after SIGTERM (${describeTaskEnd(last)})`);
    }
    await workersStopped;
    if (slot !== undefined) this.release.release(slot);
    if (this.release.holders() === 0 && this.release.closing) {
      await this.release.remove().catch((e: Error) => this.log('system', `could not remove the swarm service: ${e.message}`));
    }
    if (this.currentAddress) await this.host.detached(this, this.currentAddress).catch(() => undefined);
    this.host.forget(this);
    this.setState('stopped');
    this.log('system', 'stopped');
  }

  /** Swarm removes the slot's new task (its restart of the ended one) when it takes the replica away. */
  private async waitForSlotRemoval(): Promise<void> {
    const deadline = Date.now() + SLOT_REMOVAL_MS;
    while (Date.now() < deadline) {
      if (!(await this.slotTasks()).some((t) => live(t) && t.DesiredState !== 'shutdown' && t.DesiredState !== 'remove')) return;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    this.log('system', `Swarm kept replica ${this.slot} after it was taken away; another replica may have gone instead`);
  }
}
