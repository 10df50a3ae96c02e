/**
 * The daemon's side of the router's supervisor (supervisor.ts): starting it, finding it, waiting
 * for it to end, and reading what it printed.
 */
import { existsSync, openSync, readSync, closeSync, fstatSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDetachedServer } from '../../executor/start-detached-server.js';
import { isAlive, liveSupervisor, type SupervisorRecord } from './supervisor-files.js';

/**
 * The supervisor program beside this module, resolved from import.meta.url so it is found in a
 * global install too: compiled in dist/, or the TypeScript source through tsx when slipway runs
 * from its sources (its own tests).
 */
export function supervisorCommand(): string[] {
  const compiled = fileURLToPath(new URL('./supervisor.js', import.meta.url));
  if (existsSync(compiled)) return [process.execPath, compiled];
  return [process.execPath, '--import', import.meta.resolve('tsx'), fileURLToPath(new URL('./supervisor.ts', import.meta.url))];
}

export interface SupervisorStart {
  workDir: string;
  /** The supervisor's pid file and output file (haproxyPaths). */
  pidFile: string;
  logFile: string;
  drainSeconds: number;
  haproxyArgv: string[];
  env: Record<string, string>;
}

/** Starts the supervisor and waits until it wrote its pid file (it holds the access pipe by then). */
export async function startSupervisor(o: SupervisorStart): Promise<SupervisorRecord> {
  const logStart = fileSize(o.logFile);
  const pid = await startDetachedServer({
    argv: [...supervisorCommand(), o.workDir, String(o.drainSeconds), ...o.haproxyArgv],
    cwd: '/',
    env: o.env,
    logFile: o.logFile,
  });
  const deadline = Date.now() + 15_000;
  for (;;) {
    const record = liveSupervisor(o.pidFile);
    if (record?.pid === pid) return record;
    const gone = !existsSync(`/proc/${pid}`);
    if (gone || Date.now() > deadline) {
      if (!gone) process.kill(pid, 'SIGKILL');
      throw new Error(
        `The router's supervisor ${gone ? 'exited at its start' : 'did not start within 15 s'}. It said: ${outputSince(o.logFile, logStart) || 'nothing'}`,
      );
    }
    await sleep(20);
  }
}

/** Resolves true once the supervisor has exited, false after `timeoutMs`. */
export async function waitUntilGone(record: SupervisorRecord, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(record)) {
    if (Date.now() > deadline) return false;
    await sleep(25);
  }
  return true;
}

/** Asks the supervisor to soft-stop HAProxy and exit (SIGUSR1); kills it if it has not within `graceMs`. */
export async function stopSupervisor(record: SupervisorRecord, graceMs: number): Promise<void> {
  if (!signalSupervisor(record, 'SIGUSR1')) return;
  if (await waitUntilGone(record, graceMs)) return;
  // HAProxy goes with it (--pdeathsig).
  signalSupervisor(record, 'SIGKILL');
  await waitUntilGone(record, 5000);
}

/** Signals the supervisor if that very process still runs; false otherwise. */
export function signalSupervisor(record: SupervisorRecord, signal: NodeJS.Signals): boolean {
  if (!isAlive(record)) return false;
  try {
    process.kill(record.pid, signal);
    return true;
  } catch {
    return false;
  }
}

export function fileSize(path: string): number {
  try {
    const fd = openSync(path, 'r');
    try {
      return fstatSync(fd).size;
    } finally {
      closeSync(fd);
    }
  } catch {
    return 0;
  }
}

/** What was appended to a file after byte `offset`: its last 4000 characters, trimmed. */
export function outputSince(path: string, offset: number): string {
  const size = fileSize(path);
  const from = Math.max(0, offset, size - 4000);
  if (size <= from) return '';
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(size - from);
    const read = readSync(fd, buffer, 0, buffer.length, from);
    return buffer.subarray(0, read).toString('utf8').trim();
  } finally {
    closeSync(fd);
  }
}
