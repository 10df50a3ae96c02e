import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { describeSpawnError } from './process-group.js';
import { inDataPlaneGroup } from './data-plane-cgroup.js';

export interface DetachedServerStart {
  /** Program and arguments, run directly: no shell ever interprets them. */
  argv: string[];
  cwd: string;
  /** Complete environment of the process (nothing is inherited from the caller). */
  env: Record<string, string>;
  /** Its stdout and stderr are appended here (created 0600). */
  logFile: string;
}

/**
 * Starts a long-lived program that must outlive the caller and is not watched by it (the
 * router's supervisor): its own session, so no signal aimed at the caller's group or terminal
 * reaches it; its output in a file, so it never gets SIGPIPE once the caller is gone; and not
 * waited for, so the caller may exit while it runs. Whoever talks to it later finds it by the
 * pid it returns (or a pid file of its own). Rejects, naming the program, when it cannot start.
 */
export function startDetachedServer(o: DetachedServerStart): Promise<number> {
  if (o.argv.length === 0 || o.argv[0] === '') return Promise.reject(new Error('Cannot start a server from an empty command.'));
  const logFd = openSync(o.logFile, 'a', 0o600);
  return new Promise((resolve, reject) => {
    let child: ReturnType<typeof spawn>;
    try {
      const [command, ...args] = inDataPlaneGroup(o.argv);
      child = spawn(command!, args, { cwd: o.cwd, env: o.env, stdio: ['ignore', logFd, logFd], detached: true });
    } finally {
      closeSync(logFd);
    }
    child.once('error', (error: NodeJS.ErrnoException) => {
      if (child.pid === undefined) reject(describeSpawnError(o.argv, o.cwd, error));
    });
    child.once('spawn', () => {
      // The caller's event loop does not wait for it; its exit is reaped while the caller runs.
      child.unref();
      resolve(child.pid!);
    });
  });
}
