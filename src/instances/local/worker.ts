import type { WorkerSpec, LogStream } from '../backend.js';
import type { Sandbox } from '../../sandbox/sandbox-host.js';
import { describeExit } from '../../executor/run-command.js';

/**
 * A background process beside an instance (CC_WORKER_COMMAND): started with the instance,
 * restarted by its policy, stopped with the instance. Not health-checked, not routed.
 */
export class WorkerProcess {
  private current: Sandbox | undefined;
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  /** Ends the wait before a restart early (stop). */
  private wakeUp: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly spec: WorkerSpec,
    private readonly startSandbox: (onLine: (stream: 'out' | 'err', line: string) => void, attempt: number) => Promise<Sandbox>,
    private readonly log: (stream: LogStream, line: string) => void,
  ) {}

  /** Starts the worker, or goes on supervising the one an earlier daemon left running (`running`, at `attempt`). */
  start(running?: { sandbox: Sandbox; attempt: number }): void {
    this.loop = this.run(running);
  }

  /** The lines of this worker in the app's log. */
  readonly onLine = (stream: 'out' | 'err', line: string) => this.log(stream, `[${this.spec.name}] ${line}`);

  private async run(running?: { sandbox: Sandbox; attempt: number }): Promise<void> {
    for (let attempt = running?.attempt ?? 0; !this.stopping; attempt++) {
      let sandbox: Sandbox;
      if (running && attempt === running.attempt) {
        sandbox = running.sandbox;
      } else {
        try {
          sandbox = await this.startSandbox(this.onLine, attempt);
        } catch (error) {
          this.log('system', `worker ${this.spec.name} could not start: ${(error as Error).message}`);
          return;
        }
        this.log('system', `worker ${this.spec.name} started: ${JSON.stringify(this.spec.command)}`);
      }
      this.current = sandbox;
      const exit = await sandbox.done;
      if (this.stopping) return;
      const failed = exit.exitCode !== 0;
      const again = this.spec.restart === 'always' || (this.spec.restart === 'on-failure' && failed);
      if (!again) {
        this.log('system', `worker ${this.spec.name} ${describeExit(exit)}; not restarted (CC_WORKER_RESTART=${this.spec.restart})`);
        return;
      }
      this.log('system', `worker ${this.spec.name} ${describeExit(exit)}; restarting in ${this.spec.restartDelayMs / 1000} s`);
      await new Promise<void>((resolve) => {
        this.wakeUp = resolve;
        this.timer = setTimeout(resolve, this.spec.restartDelayMs);
      });
    }
  }

  /** CPU time of the worker's sandbox now running, in seconds; undefined between attempts. */
  cpuSeconds(): number | undefined {
    return this.current && !this.current.exited() ? this.current.cpuSeconds() : undefined;
  }

  /** The daemon lets go: the worker's sandbox runs on and a later daemon supervises it. */
  detach(): void {
    this.stopping = true;
    clearTimeout(this.timer);
    this.wakeUp?.();
    this.current?.detach();
  }

  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    this.wakeUp?.();
    const sandbox = this.current;
    if (sandbox && !sandbox.exited()) {
      await sandbox.signal('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const over = new Promise<'grace'>((r) => (timer = setTimeout(() => r('grace'), graceMs)));
      if ((await Promise.race([sandbox.done, over])) === 'grace') await sandbox.signal('SIGKILL');
      clearTimeout(timer);
      await sandbox.done;
    }
    await this.loop;
  }
}
