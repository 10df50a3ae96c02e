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

  start(): void {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    for (let attempt = 0; !this.stopping; attempt++) {
      let sandbox: Sandbox;
      try {
        sandbox = await this.startSandbox((stream, line) => this.log(stream, `[${this.spec.name}] ${line}`), attempt);
      } catch (error) {
        this.log('system', `worker ${this.spec.name} could not start: ${(error as Error).message}`);
        return;
      }
      this.current = sandbox;
      this.log('system', `worker ${this.spec.name} started: ${JSON.stringify(this.spec.command)}`);
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
