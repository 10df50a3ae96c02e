import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { dataPlaneGroupSet, inDataPlaneGroup } from './data-plane-cgroup.js';

export interface ServerStart {
  /** Long-running server, as argv (never a shell string). */
  argv: string[];
  cwd: string;
  /** Complete environment (nothing is inherited from the daemon). */
  env: Record<string, string>;
  /** Runs as this uid/gid, with no supplementary groups. */
  user?: { uid: number; gid: number };
  /** stdout and stderr are appended here, so the server outlives a daemon crash without SIGPIPE. */
  logFile: string;
  /** `cgroup.procs` files of control groups of the server's own, joined before it runs. */
  cgroupProcs?: string[];
}

export interface StartedServer {
  pid: number;
  /** Resolves when the server exits (while this daemon runs). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * The daemon lets go of the server, which runs on: the daemon's event loop no longer waits
   * for it, so a daemon told to go (SIGTERM) can exit while its servers serve.
   */
  release(): void;
}

/**
 * Starts a server meant to outlive the daemon (an add-on's PostgreSQL or Redis): in its own
 * session and process group, so a Ctrl-C aimed at the daemon does not reach it, with its output
 * in a file rather than a pipe. Short commands use runCommand/runCaptured instead, which kill
 * what they started when they end. Rejects, naming the program, when it cannot start.
 */
export async function startServer(o: ServerStart): Promise<StartedServer> {
  if (!o.argv[0]) throw new Error('Cannot start a server from an empty command.');
  // In the data plane's group the rights are dropped after the move (setpriv), not by spawn.
  const moved = dataPlaneGroupSet() || (o.cgroupProcs?.length ?? 0) > 0;
  const [command, ...args] = moved ? inDataPlaneGroup(o.argv, o.user, o.cgroupProcs) : o.argv;
  if (!command) throw new Error('Cannot start a server from an empty command.');
  const logFd = openSync(o.logFile, 'a', 0o640);
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(command, args, {
      cwd: o.cwd,
      uid: moved ? undefined : o.user?.uid,
      gid: moved ? undefined : o.user?.gid,
      env: o.env,
      stdio: ['ignore', logFd, logFd],
      detached: true,
    });
  } finally {
    closeSync(logFd);
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', (error) => reject(new Error(`${command}: ${error.message}`)));
  });
  if (child.pid === undefined) throw new Error(`${command}: no process id.`);
  return { pid: child.pid, exited, release: () => child.unref() };
}
