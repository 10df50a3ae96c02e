import type { LogStream, WorkerSpec } from '../backend.js';
import type { ReleaseService, Replica } from './release-service.js';
import type { SlotHolder } from './adoption.js';
import { TERMINAL_STATES, describeTaskEnd, meantToRun, type SwarmServices, type SwarmTask } from './swarm-services.js';
import type { EntrypointEvent } from './task-entrypoint.js';

const live = (t: SwarmTask) => !TERMINAL_STATES.has(t.Status.State);

/**
 * A worker (CC_WORKER_COMMAND) beside an instance: one replica (one slot) of the service its
 * release has for that process type, never routed nor health-checked. Swarm restarts the slot's
 * task by the worker's policy (CC_WORKER_RESTART, after its delay); this object tells the app's
 * log about each start and end as the local backend does, its lines marked with its name.
 */
export class SwarmWorker implements Replica {
  slot: number | undefined;
  /** Its running task's CPU time and when Docker read it, at the last look; undefined between tasks. */
  cpu: { seconds: number; at: number } | undefined;
  private stopping = false;
  /** Set once the slot's earlier tasks are known. */
  private ready = false;
  /** Tasks of the slot from before this worker held it: never ours. */
  private readonly before = new Set<string>();
  private readonly ended = new Set<string>();

  constructor(
    private readonly services: SwarmServices,
    private readonly spec: WorkerSpec,
    readonly service: ReleaseService,
    private readonly log: (stream: LogStream, line: string) => void,
  ) {}

  /** Adds a replica to the process type's service; the worker starts as soon as its slot has its identity. */
  async start(identity: string, timeoutMs: number, holder: SlotHolder): Promise<void> {
    this.slot = await this.service.addReplica(this, identity, timeoutMs, holder);
    for (const t of await this.slotTasks()) if (!live(t) || t.DesiredState === 'shutdown') this.before.add(t.ID);
    this.ready = true;
  }

  /** Takes over the slot an earlier daemon's worker held: the ends of its tasks until now are its past. */
  adopt(slot: number, slotTasks: SwarmTask[]): void {
    this.slot = slot;
    for (const t of slotTasks) if (!meantToRun(t)) this.before.add(t.ID);
    this.ready = true;
  }

  line(stream: LogStream, line: string, taskId: string): void {
    if (!this.before.has(taskId)) this.log(stream, `[${this.spec.name}] ${line}`);
  }

  event(event: EntrypointEvent, taskId: string): void {
    if (event.kind === 'started' && !this.before.has(taskId) && !this.stopping)
      this.log('system', `worker ${this.spec.name} started: ${JSON.stringify(this.spec.command)}`);
  }

  /** Tells each end of the slot's tasks, and whether Swarm restarts it. */
  async observe(slotTasks: SwarmTask[]): Promise<void> {
    if (!this.ready) return;
    for (const task of slotTasks) {
      if (this.stopping || live(task) || this.before.has(task.ID) || this.ended.has(task.ID)) continue;
      this.ended.add(task.ID);
      const failed = task.Status.ContainerStatus?.ExitCode !== 0;
      const again = this.spec.restart === 'always' || (this.spec.restart === 'on-failure' && failed);
      this.log(
        'system',
        again
          ? `worker ${this.spec.name} ${describeTaskEnd(task)}; restarting in ${this.spec.restartDelayMs / 1000} s`
          : `worker ${this.spec.name} ${describeTaskEnd(task)}; not restarted (CC_WORKER_RESTART=${this.spec.restart})`,
      );
    }
    // A worker instance is scaled on its workers' CPU (SwarmInstance.workerCpuTime).
    const running = slotTasks.find(
      (t) => t.Status.State === 'running' && !this.before.has(t.ID) && t.Status.ContainerStatus?.ContainerID !== undefined,
    );
    this.cpu = running && !this.stopping ? (await this.services.usage(running).catch(() => undefined))?.cpu : undefined;
  }

  /**
   * SIGTERM to the slot's task now, SIGKILL after the grace, then one replica fewer (Swarm
   * removes the slots that do not run first); the last worker of the service removes it.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    const slot = this.slot;
    const alone = this.service.leave();
    try {
      if (alone) await this.service.scaleToNone();
      if (slot !== undefined) {
        const started = Date.now();
        const signalled = new Set<string>();
        let killed = false;
        const signal = async (tasks: SwarmTask[], name: 'SIGTERM' | 'SIGKILL') => {
          for (const t of tasks) {
            if (t.Status.ContainerStatus?.ContainerID && live(t)) {
              signalled.add(t.ID);
              await this.services.kill(t, name).catch(() => undefined);
            }
          }
        };
        if (!alone) this.service.retire(slot);
        await signal(await this.slotTasks(), 'SIGTERM');
        for (;;) {
          const waiting = (await this.slotTasks()).filter((t) => live(t) && (alone || signalled.has(t.ID) || signalled.size === 0));
          if (waiting.length === 0 || Date.now() - started > graceMs + 30_000) break;
          if (!killed && Date.now() - started >= graceMs) {
            killed = true;
            await signal(waiting, 'SIGKILL');
          }
          await new Promise((r) => setTimeout(r, 50));
        }
        if (!alone) await this.service.removeReplica(slot);
      }
    } finally {
      if (!alone) this.service.left();
      if (slot !== undefined) this.service.release(slot);
      if (this.service.holders() === 0 && this.service.closing) await this.service.remove();
    }
  }

  private async slotTasks(): Promise<SwarmTask[]> {
    return (await this.service.tasks()).filter((t) => t.Slot === this.slot && !this.before.has(t.ID));
  }
}
