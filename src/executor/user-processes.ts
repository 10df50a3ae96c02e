/**
 * The processes running as a unix user, as the kernel lists them in /proc, and their end. An
 * application's user is removed only once none is left: a uid given back while a process still
 * holds it would be the next application's, and that process would then be its.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** `Uid:` of /proc/<pid>/status: real, effective, saved and filesystem uid. */
function uidsOf(pid: number, proc = '/proc'): number[] | undefined {
  let status: string;
  try {
    status = readFileSync(`${proc}/${pid}/status`, 'utf8');
  } catch {
    return undefined; // ended meanwhile
  }
  const line = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status);
  return line ? line.slice(1, 5).map(Number) : undefined;
}

/** Pids of every process that has `uid` as its real, effective, saved or filesystem uid. */
export function processesOfUser(uid: number, proc = '/proc'): number[] {
  if (!Number.isInteger(uid) || uid <= 0) throw new Error(`Not an unprivileged uid: ${uid}.`);
  return readdirSync(proc)
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => uidsOf(pid, proc)?.includes(uid) ?? false);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits up to `waitMs` for the user's last process to end, then kills (SIGKILL) those left and
 * waits up to `killWaitMs` more. Resolves with the pids still there at the end (empty: none).
 * Each pid is checked again just before it is killed, so a number reused meanwhile by another
 * user's process is left alone.
 */
export async function endProcessesOfUser(uid: number, o: { waitMs: number; killWaitMs: number; pollMs?: number }): Promise<number[]> {
  const poll = o.pollMs ?? 100;
  const until = async (deadline: number) => {
    for (;;) {
      const left = processesOfUser(uid);
      if (left.length === 0 || Date.now() >= deadline) return left;
      await sleep(poll);
    }
  };
  const left = await until(Date.now() + o.waitMs);
  if (left.length === 0) return [];
  for (const pid of left) {
    if (!(uidsOf(pid)?.includes(uid) ?? false)) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Ended between the check and the signal.
    }
  }
  return until(Date.now() + o.killWaitMs);
}
