/**
 * What the router engines (HAProxy, nginx) share about the process they run: a graceful stop
 * bounded by the drain period, and the unprivileged system user their workers run as.
 */
import { readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";

/** True once `exited` settles, false after `timeoutMs`; the timer is cancelled so it never holds the event loop open. */
async function exitedWithin(exited: Promise<unknown>, timeoutMs: number): Promise<boolean> {
  const cancel = new AbortController();
  const timer = sleep(timeoutMs, false, { signal: cancel.signal }).catch(() => false);
  const done = await Promise.race([exited.then(() => true), timer]);
  cancel.abort();
  return done;
}

/**
 * Sends the engine's graceful-stop signal (requests in flight finish, bounded by the drain
 * period), then SIGTERM 5 s after the drain period, then SIGKILL 5 s later; resolves once it exited.
 */
export async function stopGracefully(child: { kill(signal: NodeJS.Signals): unknown }, exited: Promise<unknown>, gracefulSignal: NodeJS.Signals, drainSeconds: number): Promise<void> {
  child.kill(gracefulSignal);
  if (!(await exitedWithin(exited, (drainSeconds + 5) * 1000))) {
    child.kill("SIGTERM");
    if (!(await exitedWithin(exited, 5000))) child.kill("SIGKILL");
  }
  await exited;
}

export async function systemUserExists(name: string): Promise<boolean> {
  const passwd = await readFile("/etc/passwd", "utf8").catch(() => "");
  return passwd.split("\n").some((line) => line.startsWith(`${name}:`));
}
