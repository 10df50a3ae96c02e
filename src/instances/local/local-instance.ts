import type { CpuReading, Instance, InstanceSpec, InstanceState, LogStream } from '../backend.js';
import { describeExit } from '../../executor/run-command.js';
import type { HostTools } from '../../executor/host-tools.js';
import type { InstanceNetwork } from '../../network/netns-commands.js';
import { RestartBackoff, type BackoffPolicy } from '../../executor/restart-backoff.js';
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

/** The sandbox of attempt `attempt` of worker `index` of an instance. */
export function workerSandboxId(instanceId: string, index: number, attempt: number): string {
  return sandboxIdFor(instanceId, `w${index}-${attempt}`);
}

/** Worker number and attempt of a sandbox id of this instance's workers; undefined for another id. */
export function workerOfSandbox(instanceId: string, sandboxId: string): { index: number; attempt: number } | undefined {
  const base = sandboxIdFor(instanceId);
  const match = /^-w(\d+)-(\d+)$/.exec(sandboxId.startsWith(base) ? sandboxId.slice(base.length) : '');
  return match ? { index: Number(match[1]), attempt: Number(match[2]) } : undefined;
}
const DEFAULT_GRACE_MS = 10_000;

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/** One supervised instance: runs beforeStart then the command, restarts it after crashes. */
export class LocalInstance implements Instance {
  readonly id: string;
  readonly address: string;
  readonly port = INSTANCE_PORT;
  outdated: string | undefined;

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
  /** The daemon let go: whatever happens to the sandbox is the next daemon's business. */
  private detached = false;

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

  /** The daemon lets go: the sandbox runs on; timers and output readers are released. */
  async detach(): Promise<void> {
    this.detached = true;
    clearTimeout(this.restartTimer);
    await this.launching?.catch(() => undefined);
    this.group?.detach();
    for (const worker of this.workers) worker.detach();
  }

  /**
   * Goes on supervising an instance an earlier daemon started and left running: its main
   * sandbox and its workers' (by worker number, with the attempt each is at).
   */
  adopt(main: Sandbox, workers: ReadonlyMap<number, { sandbox: Sandbox; attempt: number }>): void {
    this.group = main;
    this.setState('running');
    this.log('system', `adopted by a new daemon: sandbox ${main.id} still runs, reachable at ${this.address}:${this.port}`);
    void main.done.then((exit) => this.onExit(main, exit));
    this.startWorkers(workers);
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

  /**
   * The writable layer over the release that the instance's before-start commands and main
   * process share, kept across its automatic restarts, removed when it stops (named after its
   * main sandbox, whose bundle a daemon start keeps while it runs).
   */
  private get layerId(): string {
    return sandboxIdFor(this.id);
  }

  /** The sandbox of one process of this instance: its release, its user, its network. */
  private sandboxFor(id: string, command: string[], outlivesDaemon = false, worker = false): SandboxStart {
    const { sandbox } = this.spec;
    return {
      id,
      outlivesDaemon,
      limits: sandbox.limits,
      onLine: (stream, line) => this.log(stream, line),
      spec: releaseSandboxSpec({
        appId: this.spec.appId,
        // Workers have layers of their own; the main process shares the instance's with its before-start commands.
        sharedLayer: worker ? undefined : this.layerId,
        releaseDir: this.spec.releaseDir,
        preRunLayer: this.spec.preRunLayer,
        sandbox,
        args: command,
        env: this.spec.env,
        hostname: 'instance',
        networkNamespacePath: `/run/netns/${this.network.namespace}`,
      }),
    };
  }

  /** Workers run beside the instance for its whole life, whatever happens to its main process. */
  private startWorkers(running: ReadonlyMap<number, { sandbox: Sandbox; attempt: number }> = new Map()): void {
    (this.spec.workers ?? []).forEach((spec, index) => {
      const worker = new WorkerProcess(
        spec,
        (onLine, attempt) =>
          this.host.sandboxes.start({ ...this.sandboxFor(workerSandboxId(this.id, index, attempt), spec.command, true, true), onLine }),
        (stream, line) => this.log(stream, line),
      );
      this.workers.push(worker);
      worker.start(running.get(index));
    });
  }

  /** The line reader of worker `index`, for a sandbox a later daemon attaches to. */
  workerLineReader(index: number): ((stream: 'out' | 'err', line: string) => void) | undefined {
    const spec = this.spec.workers?.[index];
    return spec ? (stream, line) => this.log(stream, `[${spec.name}] ${line}`) : undefined;
  }

  /** The line reader of the main process, for a sandbox a later daemon attaches to. */
  readonly mainLineReader = (stream: 'out' | 'err', line: string) => this.log(stream, line);

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
    const group = await this.host.sandboxes.start(this.sandboxFor(sandboxIdFor(this.id), this.spec.command, true));
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

  /**
   * A new CPU share for the running sandbox. A restart after a crash makes its sandbox from the
   * spec again, with the flavour the instance started with; the autoscaler's change of flavour
   * restarts the release anyway.
   */
  setCpuShare(cpuShares: number, cpuWeight: number): void {
    if (this.group && !this.group.exited()) this.group.setCpuShare?.(cpuShares, cpuWeight);
  }

  memoryWorkingSet(): number | undefined {
    return this.group && !this.group.exited() ? this.group.memoryWorkingSet?.() : undefined;
  }

  /** The sandbox's CPU time; a restart after a crash makes a new sandbox, whose count starts again. */
  cpuTime(): CpuReading | undefined {
    const seconds = this.group && !this.group.exited() ? this.group.cpuSeconds() : undefined;
    return seconds === undefined ? undefined : { seconds };
  }

  /** Its workers' CPU time: a worker restarted has a new sandbox, so the sum goes back and that interval has no rate. */
  workerCpuTime(): CpuReading | undefined {
    const readings = this.workers.map((w) => w.cpuSeconds()).filter((s): s is number => s !== undefined);
    return readings.length === 0 ? undefined : { seconds: readings.reduce((a, b) => a + b, 0) };
  }

  private onExit(group: Sandbox, exit: SandboxExit): void {
    if (this.stopping || this.detached || group !== this.group) return;
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
    if (this.stopping || this.detached) return;
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
    this.host.sandboxes.dropLayer(this.spec.appId, this.layerId);
    await this.host.release(this);
    this.setState('stopped');
    this.log('system', 'stopped');
  }
}
