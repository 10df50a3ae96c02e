import type { LogStream, WorkerSpec } from '../backend.js';
import { TERMINAL_STATES, describeTaskEnd, type SwarmServices } from './swarm-services.js';

const POLL_MS = 500;

/**
 * A worker (CC_WORKER_COMMAND) beside an instance: a service of its own, never routed nor
 * health-checked; Swarm restarts it by its policy. Its lines are marked with its name, and its
 * ends are told in the app's log as the local backend tells them.
 */
export class SwarmWorker {
  private poller: NodeJS.Timeout | undefined;
  private logs: { close(): void } | undefined;
  private readonly ended = new Set<string>();

  constructor(
    private readonly services: SwarmServices,
    private readonly spec: WorkerSpec,
    readonly serviceId: string,
    private readonly log: (stream: LogStream, line: string) => void,
  ) {}

  async start(): Promise<void> {
    this.logs = await this.services.followLogs(this.serviceId, (stream, line) => this.log(stream, `[${this.spec.name}] ${line}`));
    this.log('system', `worker ${this.spec.name} started: ${JSON.stringify(this.spec.command)}`);
    this.poller = setInterval(() => void this.watch().catch(() => undefined), POLL_MS);
  }

  private async watch(): Promise<void> {
    for (const task of await this.services.tasks(this.serviceId)) {
      if (!TERMINAL_STATES.has(task.Status.State) || this.ended.has(task.ID)) continue;
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
  }

  /** SIGTERM now, SIGKILL after the grace, then the service is removed. */
  async stop(graceMs: number): Promise<void> {
    clearInterval(this.poller);
    try {
      await this.services.update(this.serviceId, (spec) => {
        if (spec.Mode?.Replicated) spec.Mode.Replicated.Replicas = 0;
      });
      const started = Date.now();
      let termed = false;
      let killed = false;
      for (;;) {
        const live = (await this.services.tasks(this.serviceId)).filter((t) => !TERMINAL_STATES.has(t.Status.State));
        if (live.length === 0 || Date.now() - started > graceMs + 30_000) break;
        const signal = !termed ? 'SIGTERM' : !killed && Date.now() - started >= graceMs ? 'SIGKILL' : undefined;
        if (signal) {
          for (const t of live) {
            const containerId = t.Status.ContainerStatus?.ContainerID;
            if (containerId) await this.services.kill(containerId, signal).catch(() => undefined);
          }
          if (signal === 'SIGTERM') termed = true;
          else killed = true;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      this.logs?.close();
      await this.services.remove(this.serviceId);
    }
  }
}
