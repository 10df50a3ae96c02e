import type { Instance, InstanceSpec, InstanceState, LogStream } from '../backend.js';
import { describeExit } from '../../executor/run-command.js';
import type { HostTools, InstanceNetwork } from './netns-commands.js';
import { RestartBackoff, type BackoffPolicy } from './restart-backoff.js';
import type { Sandbox, SandboxExit, SandboxHost, SandboxStart } from '../../sandbox/sandbox-host.js';
import { runSandboxed } from '../../sandbox/run-sandboxed.js';
import { describeSandboxExit, sandboxIdFor } from '../../sandbox/describe.js';
import { WorkerProcess } from './worker.js';
import { releaseSandboxSpec } from '../../sandbox/release-sandbox.js';

/** What an instance needs from the backend that owns it. */
export interface InstanceHost {
  tools: HostTools;
  sandboxes: SandboxHost;
  backoff: BackoffPolicy;
  /** Kills every process left in the namespace (ones that escaped the process group too). */
  killNamespaceProcesses(namespace: string): Promise<void>;
  /** Removes the network, frees the address and forgets the instance. */
  release(instance: LocalInstance): Promise<void>;
}

export const INSTANCE_PORT = 8080;
const DEFAULT_GRACE_MS = 10_000;

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/** One supervised instance: runs beforeStart then the command, restarts it after crashes. */
export class LocalInstance implements Instance {
  readonly id: string;
  readonly address: string;
  readonly port = INSTANCE_PORT;

  private currentState: InstanceState = 'starting';
  private restartCount = 0;
  private group: Sandbox | undefined;
  private launching: Promise<void> | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  /** Aborts a beforeStart command still running when stop() is called. */
  private readonly stopSignal = new AbortController();
  private readonly backoff: RestartBackoff;
  private readonly workers: WorkerProcess[] = [];

  constructor(
    private readonly host: InstanceHost,
    readonly spec: InstanceSpec,
    readonly network: InstanceNetwork & { slot: number },
  ) {
    this.id = spec.instanceId;
    this.address = network.address;
    this.backoff = new RestartBackoff(host.backoff);
  }

  state(): InstanceState {
    return this.currentState;
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

  restarts(): number {
    return this.restartCount;
  }

  /** First start: any failure is thrown to the caller (who releases the instance). */
  async launch(): Promise<void> {
    if (this.stopping) throw new Error(`Instance ${this.id} was stopped before it started.`);
    this.launching = this.runOnce();
    try {
      await this.launching;
    } finally {
      this.launching = undefined;
    }
    this.startWorkers();
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

  /** The sandbox of one process of this instance: its release, its user, its network. */
  private sandboxFor(id: string, command: string[]): SandboxStart {
    const { sandbox } = this.spec;
    return {
      id,
      limits: sandbox.limits,
      onLine: (stream, line) => this.log(stream, line),
      spec: releaseSandboxSpec({
        releaseDir: this.spec.releaseDir,
        sandbox,
        args: command,
        env: this.spec.env,
        hostname: 'instance',
        networkNamespacePath: `/run/netns/${this.network.namespace}`,
      }),
    };
  }

  /** Workers run beside the instance for its whole life, whatever happens to its main process. */
  private startWorkers(): void {
    (this.spec.workers ?? []).forEach((spec, index) => {
      const worker = new WorkerProcess(
        spec,
        (onLine, attempt) =>
          this.host.sandboxes.start({ ...this.sandboxFor(sandboxIdFor(this.id, `w${index}-${attempt}`), spec.command), onLine }),
        (stream, line) => this.log(stream, line),
      );
      this.workers.push(worker);
      worker.start();
    });
  }

  /** beforeStart commands, then the long-running command. */
  private async runOnce(): Promise<void> {
    this.setState('starting');
    let step = 0;
    for (const command of this.spec.beforeStart) {
      this.log('system', `running before start: ${JSON.stringify(command)}`);
      const r = await runSandboxed(this.host.sandboxes, this.sandboxFor(sandboxIdFor(this.id, `b${step++}`), command), {
        signal: this.stopSignal.signal,
      });
      if (this.stopping) throw new Error('instance stopped while starting');
      if (r.exitCode !== 0) {
        throw new Error(
          `Before-start command ${JSON.stringify(command)} ${describeSandboxExit(r, this.spec.sandbox)}; the instance was not started. See its output above in the instance log.`,
        );
      }
    }
    const group = await this.host.sandboxes.start(this.sandboxFor(sandboxIdFor(this.id), this.spec.command));
    this.group = group;
    if (this.stopping) return; // stop() is waiting for launching and will end it
    this.setState('running');
    this.log(
      'system',
      `started ${JSON.stringify(this.spec.command)} (sandbox ${group.id}, uid ${this.spec.sandbox.user.uid}, ${this.spec.sandbox.flavor}) in namespace ${this.network.namespace}, reachable at ${this.address}:${this.port}`,
    );
    void group.done.then((exit) => this.onExit(group, exit));
  }

  memoryUsage(): number | undefined {
    return this.group && !this.group.exited() ? this.group.memoryUsage() : undefined;
  }

  private onExit(group: Sandbox, exit: SandboxExit): void {
    if (this.stopping || group !== this.group) return;
    const uptime = Date.now() - group.startedAt;
    this.setState('crashed');
    this.log('system', `crashed: ${describeSandboxExit(exit, this.spec.sandbox)} after ${seconds(uptime)}`);
    this.scheduleRestart(uptime);
  }

  private scheduleRestart(uptimeMs: number): void {
    const delay = this.backoff.nextDelay(uptimeMs);
    this.setState('restarting');
    this.log('system', `restarting in ${seconds(delay)} (restart #${this.restartCount + 1})`);
    this.restartTimer = setTimeout(() => void this.restart(), delay);
  }

  private async restart(): Promise<void> {
    this.restartTimer = undefined;
    if (this.stopping) return;
    this.restartCount++;
    const attempt = (async () => {
      // A helper that left the process group could still hold port 8080.
      await this.host.killNamespaceProcesses(this.network.namespace);
      await this.runOnce();
    })();
    this.launching = attempt;
    try {
      await attempt;
    } catch (e) {
      if (this.stopping) return;
      this.setState('crashed');
      this.log('system', `restart failed: ${(e as Error).message}`);
      this.scheduleRestart(0);
    } finally {
      if (this.launching === attempt) this.launching = undefined;
    }
  }

  private async stopNow(graceMs: number): Promise<void> {
    this.setState('stopping');
    this.log('system', `stopping: sending SIGTERM, killing after ${seconds(graceMs)}`);
    clearTimeout(this.restartTimer);
    this.stopSignal.abort();
    await this.launching?.catch(() => undefined);
    const workersStopped = Promise.all(this.workers.map((w) => w.stop(graceMs)));

    const group = this.group;
    if (group && !group.exited()) {
      await group.signal('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<'grace'>((r) => (timer = setTimeout(() => r('grace'), graceMs)));
      const outcome = await Promise.race([group.done, graceOver]);
      clearTimeout(timer);
      if (outcome === 'grace') {
        await group.signal('SIGKILL');
        await group.done;
        this.log('system', `killed (SIGKILL) after a grace of ${seconds(graceMs)}: the process did not exit on SIGTERM`);
      } else {
        this.log('system', `process ended after SIGTERM (${describeExit(outcome)})`);
      }
    }
    await workersStopped;
    await this.host.release(this);
    this.setState('stopped');
    this.log('system', 'stopped');
  }
}
