/**
 * What the router engines (HAProxy, nginx) share about the processes they run: their
 * environment, their short checks, a graceful stop bounded by the drain period, and the
 * unprivileged system user their workers run as.
 */
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCaptured } from '../executor/run-captured.js';

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
export async function stopGracefully(
  child: { kill(signal: NodeJS.Signals): unknown },
  exited: Promise<unknown>,
  gracefulSignal: NodeJS.Signals,
  drainSeconds: number,
): Promise<void> {
  child.kill(gracefulSignal);
  if (!(await exitedWithin(exited, (drainSeconds + 5) * 1000))) {
    child.kill('SIGTERM');
    if (!(await exitedWithin(exited, 5000))) child.kill('SIGKILL');
  }
  await exited;
}

/**
 * The engines' environment: the daemon's PATH (an engine named without a path is looked up
 * there) and messages in the C locale; nothing else of the daemon's environment reaches them.
 */
export function engineEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' };
}

/** Runs a short engine command (a configuration check, openssl): its exit code and all it printed. */
export async function runEngineTool(argv: string[]): Promise<{ code: number; output: string; missing: boolean }> {
  try {
    const result = await runCaptured({ argv, cwd: '/', env: engineEnv(), timeoutMs: 20_000 });
    const how = result.timedOut ? '\nstopped after 20 s' : result.signal ? `\nkilled by ${result.signal}` : '';
    return { code: result.exitCode ?? 1, missing: false, output: `${result.stdout}${result.stderr}${how}` };
  } catch (error) {
    // The program could not start: the executor's message says which and why.
    return { code: 1, missing: /ENOENT/.test((error as Error).message), output: (error as Error).message };
  }
}

export async function systemUserExists(name: string): Promise<boolean> {
  const passwd = await readFile('/etc/passwd', 'utf8').catch(() => '');
  return passwd.split('\n').some((line) => line.startsWith(`${name}:`));
}
