import { open, readlink } from 'node:fs/promises';
import { pidAlive } from '../executor/pid-alive.js';
import { startServer } from '../executor/start-server.js';
import { basename } from 'node:path';
import type { SystemUser } from './system-user.js';

export interface ServerSpawnSpec {
  /** Long-running server, as argv (never a shell string). */
  argv: string[];
  /** Unprivileged account the server runs as; absent when argv drops to one itself (a sandbox). */
  user?: SystemUser;
  /** Working directory; also how a later daemon recognises the process as its own. */
  cwd: string;
  /** stdout and stderr are appended here, so the server outlives a daemon crash without SIGPIPE. */
  logFile: string;
  env?: Record<string, string>;
  /** `cgroup.procs` files of the server's own control groups (its limits), joined before it runs. */
  cgroupProcs?: string[];
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * A server process slipway started, or found still running from an earlier daemon (adopted).
 * Servers run in their own process group so a Ctrl-C aimed at the daemon does not hit them
 * before the daemon shuts them down in order.
 */
export class ServerProcess {
  private exitInfo: ExitInfo | undefined;
  readonly exited: Promise<ExitInfo>;

  private constructor(
    readonly pid: number,
    readonly label: string,
    exited: Promise<ExitInfo>,
    private readonly letGo: () => void,
  ) {
    this.exited = exited.then((info) => (this.exitInfo = info));
  }

  static async spawn(label: string, spec: ServerSpawnSpec): Promise<ServerProcess> {
    if (!spec.argv[0]) throw new Error(`No command given to start ${label}.`);
    let server: Awaited<ReturnType<typeof startServer>>;
    try {
      server = await startServer({
        argv: spec.argv,
        cwd: spec.cwd,
        user: spec.user ? { uid: spec.user.uid, gid: spec.user.gid } : undefined,
        env: { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', ...spec.env },
        logFile: spec.logFile,
        cgroupProcs: spec.cgroupProcs,
      });
    } catch (error) {
      throw new Error(`Could not start ${label} (${(error as Error).message}). Is its Debian package installed?`);
    }
    return new ServerProcess(server.pid, label, server.exited, server.release);
  }

  /**
   * Wraps a process that an earlier daemon started and that is still running. It is not this
   * daemon's child, so its exit is seen by polling (its status is not ours to read).
   */
  static adopt(label: string, pid: number): ServerProcess {
    let timer: NodeJS.Timeout | undefined;
    const exited = new Promise<ExitInfo>((resolve) => {
      timer = setInterval(() => {
        if (!pidAlive(pid)) {
          clearInterval(timer);
          resolve({ code: null, signal: null });
        }
      }, 100);
    });
    return new ServerProcess(pid, label, exited, () => clearInterval(timer));
  }

  /**
   * The daemon lets go (SIGTERM): the server runs on, and nothing of this daemon waits for it
   * any more, so the daemon can exit. `exited` may then never resolve.
   */
  release(): void {
    this.letGo();
  }

  isRunning(): boolean {
    return this.exitInfo === undefined;
  }

  describeExit(): string {
    const info = this.exitInfo;
    if (!info) return 'still running';
    // Adopted from an earlier daemon: its exit status went to whoever reaps it, not to us.
    if (info.code === null && info.signal === null) return 'ended (exit status unknown)';
    return info.signal ? `killed by ${info.signal}` : `exited with code ${info.code}`;
  }

  /** Sends `signal`, waits up to graceMs for the exit, then SIGKILLs the process group. */
  async stop(signal: NodeJS.Signals, graceMs: number): Promise<void> {
    if (!this.isRunning()) return;
    sendSignal(this.pid, signal);
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(resolve, graceMs, 'timeout').unref());
    if ((await Promise.race([this.exited, timeout])) === 'timeout') {
      sendSignal(-this.pid, 'SIGKILL');
      sendSignal(this.pid, 'SIGKILL');
      await this.exited;
    }
  }
}

function sendSignal(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/**
 * True when `pid` is a live process whose executable name starts with `exePrefix` and whose
 * working directory is `cwd`: enough to tell our own server from a recycled pid.
 */
export async function isOurServer(pid: number, exePrefix: string, cwd: string): Promise<boolean> {
  if (!Number.isInteger(pid) || pid <= 1) return false;
  try {
    const [exe, dir] = await Promise.all([readlink(`/proc/${pid}/exe`), readlink(`/proc/${pid}/cwd`)]);
    return basename(exe).startsWith(exePrefix) && dir === cwd;
  } catch {
    return false;
  }
}

/** The last `bytes` of a log file, for error messages (servers do not log our secrets). */
export async function logTail(path: string, bytes = 3000): Promise<string> {
  try {
    const handle = await open(path, 'r');
    try {
      const { size } = await handle.stat();
      const start = Math.max(0, size - bytes);
      const buffer = Buffer.alloc(size - start);
      await handle.read(buffer, 0, buffer.length, start);
      return buffer.toString('utf8').trim();
    } finally {
      await handle.close();
    }
  } catch {
    return '(no log)';
  }
}

/**
 * Polls `probe` until it returns true; fails early if the process exits, or after timeoutMs.
 * `probe` errors are remembered and reported on timeout.
 */
export async function waitUntilReady(
  server: ServerProcess,
  probe: () => Promise<boolean>,
  timeoutMs: number,
  describeFailure: (reason: string) => Promise<Error>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = 'no answer yet';
  while (Date.now() < deadline) {
    if (!server.isRunning()) throw await describeFailure(`${server.label} ${server.describeExit()}`);
    try {
      if (await probe()) return;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw await describeFailure(`${server.label} did not become ready within ${timeoutMs} ms (last probe: ${lastError})`);
}
