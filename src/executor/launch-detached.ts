import { spawn } from 'node:child_process';
import { describeSpawnError } from './process-group.js';

export interface DetachedLaunch {
  /** Program and arguments, run directly: no shell ever interprets them. */
  argv: string[];
  cwd: string;
  /** Complete environment of the process. */
  env: Record<string, string>;
  /** How long to wait for a quick exit (a launcher that hands over and ends) before leaving it running. */
  settleMs: number;
}

export type DetachedOutcome = { state: 'exited'; exitCode: number | null; signal: string | null } | { state: 'running'; pid: number };

/**
 * Launches a program the caller does not wait for (xdg-open, which may stay attached to the
 * browser it starts): in its own session, without input or output, and never killed by the
 * caller. Reports how it ended if that happens within `settleMs`, else that it still runs; the
 * caller's process may then exit. Unlike runCommand, what it starts in its group is left alone:
 * a launcher's whole point is to leave a program behind. Rejects when it cannot start at all.
 */
export function launchDetached(o: DetachedLaunch): Promise<DetachedOutcome> {
  if (o.argv.length === 0 || o.argv[0] === '') {
    return Promise.reject(new Error('Cannot run an empty command: argv must hold at least the program name.'));
  }
  return new Promise((resolve, reject) => {
    const child = spawn(o.argv[0]!, o.argv.slice(1), { cwd: o.cwd, env: o.env, stdio: 'ignore', detached: true });
    let timer: NodeJS.Timeout | undefined;
    child.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(describeSpawnError(o.argv, o.cwd, error));
    });
    child.once('spawn', () => {
      timer = setTimeout(() => {
        child.unref();
        resolve({ state: 'running', pid: child.pid! });
      }, o.settleMs);
    });
    child.once('exit', (exitCode, signal) => {
      clearTimeout(timer);
      resolve({ state: 'exited', exitCode, signal });
    });
  });
}
