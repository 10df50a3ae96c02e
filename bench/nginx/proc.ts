/**
 * What /proc says about the nginx master and its workers. apply() uses it to know that
 * every worker of the previous configuration has stopped accepting connections: nginx
 * sets a worker's title to "worker process is shutting down" when it closes its
 * listening sockets on a graceful reload.
 *
 * Reads are synchronous on purpose: procfs files are tiny and in memory, and a hundred
 * awaited reads would each wait for a turn of a possibly busy event loop.
 */
import { readdirSync, readFileSync } from 'node:fs';

function readProc(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

export function childPids(parentPid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProc(`/proc/${entry}/stat`);
    // Field 4 (ppid) follows the parenthesised command name, which may itself contain spaces.
    const afterName = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(afterName[1]) === parentPid) pids.push(Number(entry));
  }
  return pids;
}

/** The process title, or undefined once the process is gone. */
export function processTitle(pid: number): string | undefined {
  const raw = readProc(`/proc/${pid}/cmdline`);
  if (raw.length === 0) return undefined; // gone, or a zombie (empty cmdline)
  return raw.replace(/\0+$/, '').replace(/\0/g, ' ');
}

/** True once the worker no longer accepts new connections (shutting down or exited). */
export function workerStoppedAccepting(pid: number): boolean {
  const title = processTitle(pid);
  return title === undefined || title.includes('shutting down') || !title.includes('nginx');
}
