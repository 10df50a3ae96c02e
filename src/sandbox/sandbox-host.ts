/**
 * Starts sandboxes with runc and cleans up after them: a bundle folder per sandbox (its
 * config.json and an empty, read-only root file system), a cgroup with its limits, and the
 * runc process that stays the sandbox's parent. Also the sweep run at daemon start, which
 * kills what a daemon killed with -9 left running.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { spawnProcessGroup, type ProcessGroup } from '../executor/process-group.js';
import { runCommand } from '../executor/run-command.js';
import { ociConfig, ROOT_SYMLINKS, type SandboxSpec } from './oci-config.js';
import { SandboxCgroups, type SandboxLimits } from './cgroups.js';
import { checkContainerId, deleteArgv, killArgv, listArgv, runArgv } from './runc-commands.js';

export interface SandboxHostOptions {
  /** Folder (root-only) holding one bundle per running sandbox. */
  bundlesDir: string;
  /** runc's state folder. */
  stateDir: string;
  /** Name of slipway's cgroup root for this daemon, e.g. `slipway77`. */
  cgroupRoot: string;
}

export interface SandboxStart {
  /** Unique id: lower-case letters, digits and '-', starting with a letter. */
  id: string;
  spec: Omit<SandboxSpec, 'cgroupsPath'>;
  limits: SandboxLimits;
  onLine(stream: 'out' | 'err', line: string): void;
  /** Interactive use (one-off commands): raw output and a standard input pipe. */
  io?: { onData(stream: 'out' | 'err', chunk: Buffer): void };
}

export interface SandboxExit {
  exitCode: number | null;
  signal: string | null;
  /** The kernel killed a process of the sandbox because it reached its memory limit. */
  outOfMemory: boolean;
}

export interface Sandbox {
  readonly id: string;
  /** pid of the runc process (the sandbox's parent on the host). */
  readonly pid: number;
  readonly startedAt: number;
  /** Delivers a signal to the app (through the sandbox's init). */
  signal(signal: 'SIGTERM' | 'SIGINT' | 'SIGHUP' | 'SIGKILL'): Promise<void>;
  exited(): boolean;
  memoryUsage(): number | undefined;
  /** Resolves when the sandbox has ended and everything of it is removed. */
  readonly done: Promise<SandboxExit>;
  /** Standard input of the command, with `io`. */
  readonly stdin?: NodeJS.WritableStream;
}

const SIGNALS_BY_NUMBER: Record<number, string> = { 1: 'SIGHUP', 2: 'SIGINT', 6: 'SIGABRT', 9: 'SIGKILL', 11: 'SIGSEGV', 15: 'SIGTERM' };
const SYSTEM_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' };

export class SandboxHost {
  readonly cgroups: SandboxCgroups;
  private readonly live = new Map<string, Sandbox>();

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
    const config = ociConfig({ ...s.spec, cgroupsPath: this.cgroups.runtimePath(id) });
    rmSync(bundle, { recursive: true, force: true });
    mkdirSync(join(bundle, 'rootfs'), { recursive: true, mode: 0o700 });
    chmodSync(join(bundle, 'rootfs'), 0o755);
    for (const [name, target] of Object.entries(ROOT_SYMLINKS)) symlinkSync(target, join(bundle, 'rootfs', name));
    writeFileSync(join(bundle, 'config.json'), JSON.stringify(config), { mode: 0o600 });
    this.cgroups.create(id, s.limits);

    let group: ProcessGroup;
    try {
      group = await spawnProcessGroup({
        argv: runArgv(this.o.stateDir, bundle, id),
        cwd: bundle,
        env: SYSTEM_ENV,
        onLine: s.onLine,
        onData: s.io?.onData,
        stdin: s.io !== undefined,
      });
    } catch (error) {
      this.cleanup(id);
      throw error;
    }
    let exited = false;
    const done = group.done.then(async (exit): Promise<SandboxExit> => {
      exited = true;
      const outOfMemory = this.cgroups.outOfMemory(id);
      await this.destroy(id);
      // runc reports a signal that ended the sandbox's init as 128 + its number.
      const code = exit.exitCode;
      if (code !== null && code > 128 && code <= 128 + 64) {
        return { exitCode: null, signal: SIGNALS_BY_NUMBER[code - 128] ?? `signal ${code - 128}`, outOfMemory };
      }
      return { exitCode: code, signal: exit.signal, outOfMemory };
    });
    const sandbox: Sandbox = {
      id,
      pid: group.pid,
      startedAt: group.startedAt,
      exited: () => exited,
      memoryUsage: () => this.cgroups.memoryUsage(id),
      stdin: group.stdin,
      signal: async (signal) => {
        if (exited) return;
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
    };
    this.live.set(id, sandbox);
    void done.finally(() => this.live.delete(id));
    return sandbox;
  }

  /** Daemon stop: whatever still runs (builds, one-off commands) is killed and removed. */
  async killAll(): Promise<void> {
    const running = [...this.live.values()];
    await Promise.all(running.map((s) => s.signal('SIGKILL').catch(() => undefined)));
    await Promise.all(running.map((s) => s.done.catch(() => undefined)));
  }

  /**
   * After a crash of the daemon: every sandbox runc still knows of in this state folder is
   * killed and deleted, with its cgroup and its bundle. Returns the ids it removed.
   */
  async sweep(): Promise<string[]> {
    const out: string[] = [];
    await runCommand({
      argv: listArgv(this.o.stateDir),
      cwd: '/',
      env: SYSTEM_ENV,
      timeoutMs: 30_000,
      onLine: (stream, line) => stream === 'out' && out.push(line.trim()),
    });
    const ids = new Set(out.filter((l) => /^[a-z][a-z0-9-]{0,62}$/.test(l)));
    for (const id of this.cgroups.list()) ids.add(id);
    for (const id of ids) {
      await this.runc(killArgv(this.o.stateDir, id, 'KILL'));
      this.cgroups.killAll(id);
      await this.destroy(id);
    }
    rmSync(this.o.bundlesDir, { recursive: true, force: true });
    mkdirSync(this.o.bundlesDir, { recursive: true, mode: 0o700 });
    return [...ids];
  }

  private async destroy(id: string): Promise<void> {
    await this.runc(deleteArgv(this.o.stateDir, id));
    this.cleanup(id);
  }

  private cleanup(id: string): void {
    this.cgroups.killAll(id);
    this.cgroups.remove(id);
    rmSync(join(this.o.bundlesDir, id), { recursive: true, force: true });
  }

  private async runc(argv: string[]): Promise<void> {
    await runCommand({ argv, cwd: '/', env: SYSTEM_ENV, timeoutMs: 30_000 });
  }
}
