import { readFileSync } from 'node:fs';

/**
 * True while `pid` runs. A zombie (or a process being torn down) counts as gone: it holds
 * nothing, and a server adopted from an earlier daemon is nobody's child here, so where no init
 * reaps orphans (a container whose first process does not) it stays a zombie after it dies,
 * which signal 0 still reaches. The one liveness test of a pid.
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const state = processState(pid);
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/** The state letter of /proc/<pid>/stat (R, S, D, Z...), undefined when there is no such process. */
export function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold spaces or ")": the state follows the last ")".
    return /^\S/.exec(stat.slice(stat.lastIndexOf(')') + 2))?.[0];
  } catch {
    return undefined;
  }
}
