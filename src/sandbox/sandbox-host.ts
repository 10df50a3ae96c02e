/**
 * Starts sandboxes with runc and cleans up after them: a bundle folder per sandbox (its
 * config.json and an empty, read-only root file system), a cgroup with its limits, and the
 * process that stays the sandbox's parent on the host: conmon (conmon-commands.ts), which had
 * runc create the sandbox. Also the sweep run at daemon start, which kills what a daemon
 * killed with -9 left running.
 */
import { mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { spawnProcessGroup, type ProcessGroup, type ProcessGroupExit } from '../executor/process-group.js';
import { OutputFileTail } from './output-file.js';
import { sandboxIdentity } from './identity-files.js';
import { runCommand } from '../executor/run-command.js';
import { ociConfig, ROOT_SYMLINKS, type SandboxLayer, type SandboxSpec } from './oci-config.js';
import { SandboxCgroups, type SandboxLimits } from './cgroups.js';
import { checkContainerId, deleteArgv, killArgv, listArgv, runArgv, startArgv } from './runc-commands.js';
import { CONMON_SYNC_PIPE_ENV, conmonArgv, exitDir } from './conmon-commands.js';
import { alive, createdPid, endMonitors, exitFileStatus, monitorsOf, readHolder, writeHolder } from './sandbox-holder.js';
import { type LayeredRelease, makeLayer, removeLayer, removeLayerOf, sweepLayers } from './sandbox-layer.js';
import { SYSTEM_TOOL_ENV } from '../executor/system-tools.js';

/**
 * What stays on the host as the sandbox's parent: conmon, or `runc run` in the foreground (what
 * every sandbox had before, about 8 MiB more per instance; kept for bench/start-command.ts).
 */
export type SandboxHolder = 'conmon' | 'runc';

export interface SandboxHostOptions {
  /** Folder (root-only) holding one bundle per running sandbox. */
  bundlesDir: string;
  /** runc's state folder. */
  stateDir: string;
  /** Name of slipway's cgroup root for this daemon, e.g. `slipway77`. */
  cgroupRoot: string;
  /** Default conmon. */
  holder?: SandboxHolder;
  /**
   * Where the writable layers of an app's release sandboxes go (sandbox-layer.ts): a folder of
   * the app's own filesystem. Without it, `<bundlesDir>-layers/<app id>`.
   */
  layersFolder?: (appId: string) => string;
}

export interface SandboxStart {
  /** Unique id: lower-case letters, digits and '-', starting with a letter. */
  id: string;
  spec: SandboxStartSpec;
  limits: SandboxLimits;
  onLine(stream: 'out' | 'err', line: string): void;
  /** Interactive use (one-off commands): raw output and a standard input pipe. */
  io?: { onData(stream: 'out' | 'err', chunk: Buffer): void };
  /**
   * The sandbox may outlive the daemon (instances, workers): its output goes to a file its
   * monitor keeps (output-file.ts), not to the daemon's pipes, and a later daemon can attach().
   */
  outlivesDaemon?: boolean;
}

/**
 * What a sandbox runs with; `layered` is a release seen writable through a layer of this
 * sandbox's own, the release folder itself staying read-only (sandbox-layer.ts).
 */
export type SandboxStartSpec = Omit<SandboxSpec, 'cgroupsPath' | 'layers'> & { layered?: LayeredRelease };

export interface SandboxExit {
  exitCode: number | null;
  signal: string | null;
  /** The kernel killed a process of the sandbox because it reached its memory limit. */
  outOfMemory: boolean;
}

export interface Sandbox {
  readonly id: string;
  /** pid of the sandbox's parent on the host (conmon, or runc with the runc holder). */
  readonly pid: number;
  readonly startedAt: number;
  /** Delivers a signal to the app (through the sandbox's init). */
  signal(signal: 'SIGTERM' | 'SIGINT' | 'SIGHUP' | 'SIGKILL'): Promise<void>;
  exited(): boolean;
  memoryUsage(): number | undefined;
  /** CPU time its processes used so far, in seconds (undefined when unknown). */
  cpuSeconds(): number | undefined;
  /** Its memory less the file cache the kernel may take back (SandboxCgroups.memoryWorkingSet). */
  memoryWorkingSet?(): number | undefined;
  /** A new CPU share for the running sandbox (flavour change without restart); whether it was written. */
  setCpuShare?(cpuShares: number, cpuWeight: number): boolean;
  /** Resolves when the sandbox has ended and everything of it is removed. */
  readonly done: Promise<SandboxExit>;
  /** Standard input of the command, with `io`. */
  readonly stdin?: NodeJS.WritableStream;
  /**
   * The daemon lets go of a sandbox started with `outlivesDaemon`: it runs on, its output reader
   * saves its position, and `done` never resolves in this daemon.
   */
  detach(): void;
}

const SIGNALS_BY_NUMBER: Record<number, string> = { 1: 'SIGHUP', 2: 'SIGINT', 6: 'SIGABRT', 9: 'SIGKILL', 11: 'SIGSEGV', 15: 'SIGTERM' };

export class SandboxHost {
  readonly cgroups: SandboxCgroups;
  private readonly live = new Map<string, Sandbox>();
  /** Sandboxes that outlive the daemon (instances, workers), among the live ones. */
  private readonly outliving = new Set<string>();

  constructor(private readonly o: SandboxHostOptions) {
    this.cgroups = new SandboxCgroups(o.cgroupRoot);
    for (const dir of [o.bundlesDir, o.stateDir]) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      chmodSync(dir, 0o700);
    }
  }

  async start(s: SandboxStart): Promise<Sandbox> {
    const id = checkContainerId(s.id);
    const bundle = join(this.o.bundlesDir, id);
    const identityFolder = join(bundle, 'etc-identity');
    const identity = { passwd: join(identityFolder, 'passwd'), group: join(identityFolder, 'group') };
    const { layered, ...spec } = s.spec;
    removeLayerOf(bundle);
    rmSync(bundle, { recursive: true, force: true });
    mkdirSync(join(bundle, 'rootfs'), { recursive: true, mode: 0o700 });
    let layers: SandboxLayer[] = [];
    try {
      if (layered) {
        const layersRoot = this.layersRoot(layered.appId);
        layers = [
          makeLayer({
            bundle,
            layersRoot,
            id: layered.shared ?? id,
            release: layered.folder,
            shared: layered.shared !== undefined,
            preRun: layered.preRun,
            capture: layered.capture,
          }),
        ];
      }
    } catch (error) {
      removeLayerOf(bundle);
      rmSync(bundle, { recursive: true, force: true });
      throw error;
    }
    const config = ociConfig({ ...spec, layers, identityFolder, cgroupsPath: this.cgroups.runtimePath(id) });
    const files = sandboxIdentity(
      { passwd: readFileSync('/etc/passwd', 'utf8'), group: readFileSync('/etc/group', 'utf8') },
      s.spec.user,
      s.spec.groups,
    );
    mkdirSync(identityFolder, { mode: 0o755 });
    writeFileSync(identity.passwd, files.passwd, { mode: 0o644 });
    writeFileSync(identity.group, files.group, { mode: 0o644 });
    chmodSync(join(bundle, 'rootfs'), 0o755);
    for (const [name, target] of Object.entries(ROOT_SYMLINKS)) symlinkSync(target, join(bundle, 'rootfs', name));
    writeFileSync(join(bundle, 'config.json'), JSON.stringify(config), { mode: 0o600 });
    this.cgroups.create(id, s.limits);

    const conmon = (this.o.holder ?? 'conmon') === 'conmon';
    if (conmon) mkdirSync(exitDir(bundle), { mode: 0o700 });
    const outputFile = conmon && s.outlivesDaemon ? join(bundle, OUTPUT_FILE) : undefined;
    let group: ProcessGroup;
    try {
      group = await spawnProcessGroup({
        argv: conmon ? conmonArgv({ stateDir: this.o.stateDir, bundle, id, outputFile }) : runArgv(this.o.stateDir, bundle, id),
        cwd: bundle,
        env: conmon ? { ...SYSTEM_TOOL_ENV, ...CONMON_SYNC_PIPE_ENV } : SYSTEM_TOOL_ENV,
        onLine: s.onLine,
        onData: s.io?.onData,
        stdin: s.io !== undefined,
        reportPipe: conmon,
        // conmon's own complaints (runc's errors among them) go beside the app's output.
        outputFile: outputFile === undefined ? undefined : join(bundle, MONITOR_OUTPUT_FILE),
        dataPlane: outputFile !== undefined,
      });
    } catch (error) {
      this.cleanup(id);
      if (conmon) throw new Error(`${(error as Error).message} (conmon comes with the Debian package conmon)`);
      throw error;
    }
    const tail = outputFile === undefined ? undefined : new OutputFileTail(outputFile, join(bundle, OUTPUT_POSITION_FILE), s.onLine);
    tail?.start();
    if (outputFile !== undefined) writeHolder(bundle, { pid: group.pid, startedAt: group.startedAt });
    const sandbox = this.track(id, group.pid, group.startedAt, group.done, tail, () => group.release(), group.stdin);
    if (conmon) await this.startCreated(id, group, s.onLine, outputFile === undefined ? undefined : join(bundle, MONITOR_OUTPUT_FILE));
    return sandbox;
  }

  /**
   * Finds a sandbox an earlier daemon started with `outlivesDaemon` and left running: its
   * monitor must still hold its bundle. Its output is read on from where that daemon stopped.
   * Undefined when it is gone (its remains are for sweep()).
   */
  attach(id: string, onLine: SandboxStart['onLine']): Sandbox | undefined {
    checkContainerId(id);
    const bundle = join(this.o.bundlesDir, id);
    const holder = readHolder(bundle);
    if (!holder || !monitorsOf(this.o.bundlesDir, id).includes(holder.pid)) return undefined;
    const tail = new OutputFileTail(join(bundle, OUTPUT_FILE), join(bundle, OUTPUT_POSITION_FILE), onLine);
    tail.start();
    let watching: NodeJS.Timeout | undefined;
    // Not this daemon's child: its end is seen by polling, as often as a child's exit would be noticed.
    const ended = new Promise<ProcessGroupExit>((resolve) => {
      watching = setInterval(() => {
        if (alive(holder.pid)) return;
        clearInterval(watching);
        resolve({ exitCode: null, signal: null });
      }, 100);
    });
    return this.track(id, holder.pid, holder.startedAt, ended, tail, () => clearInterval(watching));
  }

  /** Ids of the bundles an earlier daemon left whose monitor still runs (candidates for attach()). */
  heldSandboxes(): string[] {
    return readdirSync(this.o.bundlesDir).filter((id) => {
      if (!/^[a-z][a-z0-9-]{0,62}$/.test(id)) return false;
      const holder = readHolder(join(this.o.bundlesDir, id));
      return holder !== undefined && monitorsOf(this.o.bundlesDir, id).includes(holder.pid);
    });
  }

  /** The Sandbox of a running monitor, whether this daemon started it or found it. */
  private track(
    id: string,
    pid: number,
    startedAt: number,
    monitorEnded: Promise<ProcessGroupExit>,
    tail: OutputFileTail | undefined,
    release: () => void,
    stdin?: NodeJS.WritableStream,
  ): Sandbox {
    const bundle = join(this.o.bundlesDir, id);
    let exited = false;
    let detached = false;
    const done = monitorEnded.then(async (exit): Promise<SandboxExit> => {
      exited = true;
      tail?.flush();
      tail?.stop();
      const outOfMemory = this.cgroups.outOfMemory(id);
      // conmon's own exit code tells the sandbox's too, but also its own failures: the file is the sandbox's.
      const code = exitFileStatus(bundle, id) ?? exit.exitCode;
      await this.destroy(id);
      // runc and conmon report a signal that ended the sandbox's init as 128 + its number.
      if (code !== null && code > 128 && code <= 128 + 64) {
        return { exitCode: null, signal: SIGNALS_BY_NUMBER[code - 128] ?? `signal ${code - 128}`, outOfMemory };
      }
      return { exitCode: code, signal: exit.signal, outOfMemory };
    });
    const sandbox: Sandbox = {
      id,
      pid,
      startedAt,
      exited: () => exited,
      memoryUsage: () => this.cgroups.memoryUsage(id),
      cpuSeconds: () => this.cgroups.cpuSeconds(id),
      memoryWorkingSet: () => this.cgroups.memoryWorkingSet(id),
      setCpuShare: (cpuShares, cpuWeight) => this.cgroups.setCpuShare(id, cpuShares, cpuWeight),
      stdin,
      signal: async (signal) => {
        if (exited || detached) return;
        if (signal === 'SIGKILL') {
          // Killing the init ends its PID namespace, so every process of the sandbox with it;
          // the cgroup sweep catches anything that was being forked at that moment.
          await this.runc(killArgv(this.o.stateDir, id, 'KILL'));
          this.cgroups.killAll(id);
        } else {
          await this.runc(killArgv(this.o.stateDir, id, signal.slice(3)));
        }
      },
      done,
      detach: () => {
        if (!tail || exited || detached) return;
        detached = true;
        tail.stop();
        release();
        this.live.delete(id);
      },
    };
    this.live.set(id, sandbox);
    if (tail) this.outliving.add(id);
    void done.finally(() => {
      this.live.delete(id);
      this.outliving.delete(id);
    });
    return sandbox;
  }

  /**
   * Waits for conmon to report the sandbox created, then starts its program. When `runc create`
   * failed there is nothing to start: conmon ends, runc's error is on the sandbox's standard
   * error and `done` tells how it ended, as when `runc run` failed.
   */
  private async startCreated(id: string, group: ProcessGroup, onLine: SandboxStart['onLine'], monitorOutput?: string): Promise<void> {
    if ((await createdPid(group.report!)) === undefined) {
      // runc's error went to the monitor's own file: the sandbox's log gets it, as with a pipe.
      if (monitorOutput !== undefined) {
        for (const line of readFileSync(monitorOutput, 'utf8').split('\n')) if (line.trim()) onLine('err', line);
      }
      return;
    }
    const started = await runCommand({
      argv: startArgv(this.o.stateDir, id),
      cwd: '/',
      env: SYSTEM_TOOL_ENV,
      timeoutMs: 30_000,
      onLine: (stream, line) => stream === 'err' && onLine('err', line),
    });
    if (started.exitCode !== 0) {
      // Killed (or stopped) while it was being started, or runc could not: never leave it waiting.
      await this.runc(killArgv(this.o.stateDir, id, 'KILL'));
      this.cgroups.killAll(id);
    }
  }

  /**
   * Daemon stop: whatever still runs (builds, one-off commands) is killed and removed; sandboxes
   * that outlive the daemon were detached before (or are stopped with their instances).
   */
  async killAll(options: { keepOutliving?: boolean } = {}): Promise<void> {
    const running = [...this.live.values()].filter((s) => !(options.keepOutliving && this.outliving.has(s.id)));
    await Promise.all(running.map((s) => killUntilEnded(s)));
  }

  /**
   * At daemon start: every sandbox runc still knows of in this state folder is killed and
   * deleted, with its cgroup and its bundle, except those `keep` names whose monitor still runs
   * (instances and workers the daemon adopts). Returns the ids it removed.
   */
  async sweep(keep: ReadonlySet<string> = new Set()): Promise<string[]> {
    const out: string[] = [];
    await runCommand({
      argv: listArgv(this.o.stateDir),
      cwd: '/',
      env: SYSTEM_TOOL_ENV,
      timeoutMs: 30_000,
      onLine: (stream, line) => stream === 'out' && out.push(line.trim()),
    });
    const ids = new Set(out.filter((l) => /^[a-z][a-z0-9-]{0,62}$/.test(l)));
    for (const id of this.cgroups.list()) ids.add(id);
    for (const id of keep) ids.delete(id);
    for (const id of ids) {
      await this.runc(killArgv(this.o.stateDir, id, 'KILL'));
      this.cgroups.killAll(id);
      await this.destroy(id);
    }
    // A monitor ends with its sandbox; one caught between the two (or whose sandbox was never
    // created) is ended here, before its bundle goes.
    const kept = (pid: number) => [...keep].some((id) => monitorsOf(this.o.bundlesDir, id).includes(pid));
    await endMonitors(monitorsOf(this.o.bundlesDir).filter((pid) => !kept(pid)));
    for (const entry of readdirSync(this.o.bundlesDir)) {
      if (keep.has(entry)) continue;
      removeLayerOf(join(this.o.bundlesDir, entry));
      rmSync(join(this.o.bundlesDir, entry), { recursive: true, force: true });
    }
    return [...ids];
  }

  /** Where an app's layers go: its layers folder; without one, beside the bundles (tests, benches). */
  private layersRoot(appId: string): string {
    if (!/^[a-z][a-z0-9_-]{0,80}$/.test(appId)) throw new Error(`Invalid app id ${JSON.stringify(appId)}.`);
    return this.o.layersFolder?.(appId) ?? join(`${this.o.bundlesDir}-layers`, appId);
  }

  /** Removes a layer several sandboxes used in turn (`layered.shared`), once its owner is done with it. */
  dropLayer(appId: string, shared: string): void {
    removeLayer(this.layersRoot(appId), shared);
  }

  /**
   * After sweep(), once the app's filesystem is mounted: removes the writable layers there whose
   * sandbox is gone (a layer whose removal found the filesystem not yet mounted, or a crash).
   * The layers of adopted instances stay: their bundles do. Returns how many it removed.
   */
  sweepLayers(appId: string): number {
    return sweepLayers(this.layersRoot(appId), this.o.bundlesDir);
  }

  private async destroy(id: string): Promise<void> {
    await this.runc(deleteArgv(this.o.stateDir, id));
    this.cleanup(id);
  }

  private cleanup(id: string): void {
    this.cgroups.killAll(id);
    this.cgroups.remove(id);
    // The layer before the bundle that records it: a crash in between leaves it to sweepLayers().
    removeLayerOf(join(this.o.bundlesDir, id));
    rmSync(join(this.o.bundlesDir, id), { recursive: true, force: true });
  }

  private async runc(argv: string[]): Promise<void> {
    await runCommand({ argv, cwd: '/', env: SYSTEM_TOOL_ENV, timeoutMs: 30_000 });
  }
}

const OUTPUT_FILE = 'output.log';
const OUTPUT_POSITION_FILE = 'output.position';
const MONITOR_OUTPUT_FILE = 'monitor.log';

/**
 * Kills a sandbox and waits for its end, killing it again while it runs: a sandbox caught while
 * runc is still creating it refuses the first kill, then starts its program, which would hold
 * the daemon's stop for as long as it runs. After 10 s the wait ends; the sandbox is reported
 * by its own end.
 */
async function killUntilEnded(sandbox: Pick<Sandbox, 'signal' | 'done'>): Promise<void> {
  let ended = false;
  const done = sandbox.done.then(
    () => {
      ended = true;
    },
    () => {
      ended = true;
    },
  );
  for (let attempt = 0; !ended && attempt < 40; attempt++) {
    await sandbox.signal('SIGKILL').catch(() => undefined);
    await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 250).unref())]);
  }
}
