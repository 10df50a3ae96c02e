import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { inDataPlaneGroup } from './data-plane-cgroup.js';
import { LineSplitter } from './line-splitter.js';

export interface ProcessGroupOptions {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** Run with this uid/gid; supplementary groups are dropped (libuv calls setgroups(0) then). */
  user?: { uid: number; gid: number };
  onLine?: (stream: 'out' | 'err', line: string) => void;
  /** Raw output as it comes, for interactive use (one-off commands); lines are still split for onLine. */
  onData?: (stream: 'out' | 'err', chunk: Buffer) => void;
  /** Give the process a standard input pipe (closed stdin otherwise). */
  stdin?: boolean;
  /** Text written to the process's standard input, which is then closed. */
  input?: string;
  /**
   * Give the process a fourth descriptor (fd 3), a pipe it reports to apart from its output
   * (conmon's sync pipe: the sandbox's pid once created), read as ProcessGroup.report.
   */
  reportPipe?: boolean;
  /**
   * An open descriptor of the caller's that the process gets as fd 3 (not with reportPipe):
   * a pipe the caller made and sized itself (the router's access log). The caller still holds it.
   */
  fd3?: number;
  /**
   * Hand stdout and stderr over as streams (ProcessGroup.stdout/stderr) for the caller to pipe,
   * with backpressure, instead of reading them here; onLine and onData are not called then.
   */
  rawOutput?: boolean;
  /**
   * Append stdout and stderr to this file instead of pipes to the caller, so the process never
   * depends on the caller being alive to read them (a sandbox's monitor that outlives the
   * daemon); onLine and onData are not called then.
   */
  outputFile?: string;
  /** Part of the data plane: joins its control group before the program runs (data-plane-cgroup.ts). */
  dataPlane?: boolean;
  /**
   * Stay in the caller's session and process group, keeping its terminal: for a command the
   * user runs from the CLI that may prompt there (ssh asking for a key's passphrase). Signals
   * then reach the process itself only, not what it started.
   */
  keepTerminal?: boolean;
}

export interface ProcessGroupExit {
  exitCode: number | null;
  signal: string | null;
}

/**
 * A process started as the leader of its own process group (and session), so that one
 * signal reaches it and everything it forked. Exists as its own piece because both the
 * build executor (run to completion) and the instance supervisor (SIGTERM, grace, SIGKILL)
 * need the same spawning and line handling.
 */
export interface ProcessGroup {
  readonly pid: number;
  readonly startedAt: number;
  /** Sends a signal to the whole group; false when the group is already gone. */
  signalGroup(signal: NodeJS.Signals): boolean;
  /** Whether the leader has exited. */
  exited(): boolean;
  /** How the leader ended, as soon as it has (before its output is drained); undefined while it runs. */
  exitStatus(): ProcessGroupExit | undefined;
  /** The process's standard input, when asked for. */
  readonly stdin?: NodeJS.WritableStream;
  /** What the process writes on fd 3, with reportPipe. */
  readonly report?: NodeJS.ReadableStream;
  /** Its output streams, with rawOutput. */
  readonly stdout?: NodeJS.ReadableStream;
  readonly stderr?: NodeJS.ReadableStream;
  /** Resolves once the leader exited, the rest of the group is killed and output is drained. */
  readonly done: Promise<ProcessGroupExit>;
  /**
   * The caller lets go of a process that outlives it: its pipes are closed on this side and it
   * no longer keeps the caller's event loop alive. `done` then never resolves.
   */
  release(): void;
}

/** Grace for output still buffered in the pipes after the group is gone. */
const DRAIN_TIMEOUT_MS = 2000;

export function describeSpawnError(argv: string[], cwd: string, err: NodeJS.ErrnoException): Error {
  const what = JSON.stringify(argv[0]);
  switch (err.code) {
    case 'ENOENT':
      return new Error(
        `Cannot run ${what}: the program or the working directory ${JSON.stringify(cwd)} does not exist (ENOENT). ` +
          'Check the command name and that it is on PATH of the given environment.',
      );
    case 'EACCES':
      return new Error(
        `Cannot run ${what}: permission denied (EACCES). Check the program is executable and the working directory is reachable.`,
      );
    default:
      return new Error(`Cannot run ${what}: ${err.message}`);
  }
}

/**
 * Spawns argv directly (no shell) as a new process group leader.
 * Rejects only when the process could not be started at all.
 */
export function spawnProcessGroup(o: ProcessGroupOptions): Promise<ProcessGroup> {
  if (o.argv.length === 0 || o.argv[0] === '') {
    return Promise.reject(new Error('Cannot run an empty command: argv must hold at least the program name.'));
  }
  if (o.reportPipe && o.fd3 !== undefined) {
    return Promise.reject(new Error('A process has one fd 3: ask for a report pipe or hand over a descriptor, not both.'));
  }
  return new Promise((resolve, reject) => {
    const outputFd = o.outputFile === undefined ? undefined : openSync(o.outputFile, 'a', 0o600);
    let child: ReturnType<typeof spawn>;
    try {
      const [command, ...args] = o.dataPlane ? inDataPlaneGroup(o.argv) : o.argv;
      child = spawn(command!, args, {
        cwd: o.cwd,
        env: o.env,
        detached: !o.keepTerminal, // setsid(): own session and process group, pgid = pid
        stdio: [
          o.stdin || o.input !== undefined ? 'pipe' : 'ignore',
          outputFd ?? 'pipe',
          outputFd ?? 'pipe',
          ...(o.reportPipe ? (['pipe'] as const) : o.fd3 !== undefined ? [o.fd3] : []),
        ],
        uid: o.user?.uid,
        gid: o.user?.gid,
        windowsHide: true,
      });
    } finally {
      if (outputFd !== undefined) closeSync(outputFd);
    }

    const out = new LineSplitter((line) => o.onLine?.('out', line));
    const err = new LineSplitter((line) => o.onLine?.('err', line));
    if (!o.rawOutput && child.stdout && child.stderr) {
      child.stdout.on('data', (c: Buffer) => {
        o.onData?.('out', c);
        out.push(c);
      });
      child.stderr.on('data', (c: Buffer) => {
        o.onData?.('err', c);
        err.push(c);
      });
    }
    // A reader that went away (EPIPE) must not crash the daemon.
    child.stdin?.on('error', () => undefined);

    let leaderExit: ProcessGroupExit | undefined;
    const signalGroup = (signal: NodeJS.Signals): boolean => {
      if (child.pid === undefined) return false;
      try {
        process.kill(o.keepTerminal ? child.pid : -child.pid, signal);
        return true;
      } catch {
        return false; // ESRCH: nobody left in the group
      }
    };

    child.once('error', (e: NodeJS.ErrnoException) => {
      if (child.pid === undefined) reject(describeSpawnError(o.argv, o.cwd, e));
    });

    // Listen for the exit before 'spawn' fires, so even an instant exit is seen.
    const done = new Promise<ProcessGroupExit>((resolveDone) => {
      child.once('exit', (exitCode, signal) => {
        leaderExit = { exitCode, signal };
        // Whatever the leader left behind in its group would keep the pipes open (and a
        // port bound) forever: the command is over, so its helpers are too.
        // (Not with keepTerminal: the group is the caller's, and the pid is already reaped.)
        if (!o.keepTerminal) signalGroup('SIGKILL');
        const closed = (s: (NodeJS.ReadableStream & { destroyed: boolean; readableEnded: boolean }) | null) =>
          new Promise((r) => (!s || s.destroyed || s.readableEnded ? r(null) : s.once('close', r)));
        let timer: NodeJS.Timeout | undefined;
        // A process that left the group (setsid) may still hold the pipes: stop waiting then.
        const drainLimit = new Promise((r) => (timer = setTimeout(r, DRAIN_TIMEOUT_MS)));
        void Promise.race([Promise.all([closed(child.stdout), closed(child.stderr)]), drainLimit]).then(() => {
          clearTimeout(timer);
          child.stdout?.destroy();
          child.stderr?.destroy();
          child.stdio[3]?.destroy();
          out.end();
          err.end();
          resolveDone({ exitCode, signal });
        });
      });
    });

    child.once('spawn', () => {
      const pid = child.pid!;
      if (o.input !== undefined) child.stdin!.end(o.input);
      resolve({
        pid,
        startedAt: Date.now(),
        signalGroup,
        exited: () => leaderExit !== undefined,
        exitStatus: () => leaderExit,
        stdin: child.stdin ?? undefined,
        report: o.reportPipe ? (child.stdio[3] as NodeJS.ReadableStream) : undefined,
        stdout: o.rawOutput ? child.stdout! : undefined,
        stderr: o.rawOutput ? child.stderr! : undefined,
        done,
        release: () => {
          child.removeAllListeners('exit');
          for (const stream of child.stdio) stream?.destroy();
          child.unref();
        },
      });
    });
  });
}
