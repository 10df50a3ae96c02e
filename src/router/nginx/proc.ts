/**
 * What /proc says about the nginx master and its workers. apply() uses it to know that
 * every worker of the previous configuration has stopped accepting connections: nginx
 * sets a worker's title to "worker process is shutting down" when it closes its
 * listening sockets on a graceful reload.
 */
import { readdir, readFile } from "node:fs/promises";

export async function childPids(parentPid: number): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // Field 4 (ppid) follows the parenthesised command name, which may itself contain spaces.
    const afterName = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(afterName[1]) === parentPid) pids.push(Number(entry));
  }
  return pids;
}

/** The process title, or undefined once the process is gone. */
export async function processTitle(pid: number): Promise<string | undefined> {
  try {
    const raw = await readFile(`/proc/${pid}/cmdline`, "utf8");
    if (raw.length === 0) return undefined; // a zombie has an empty cmdline
    return raw.replace(/\0+$/, "").replace(/\0/g, " ");
  } catch {
    return undefined;
  }
}

/** True once the worker no longer accepts new connections (shutting down or exited). */
export async function workerStoppedAccepting(pid: number): Promise<boolean> {
  const title = await processTitle(pid);
  return title === undefined || title.includes("shutting down") || !title.includes("nginx");
}
