/**
 * What the router's supervisor (supervisor.ts, the holder) and the daemon tell each other
 * through the router's work folder (root's alone, 0700): the supervisor's pid file, checked
 * against /proc so a recycled pid is never taken for it, and the record of HAProxy's deaths,
 * one JSON line each, which the daemon reads from the offset it reached.
 */
import { readFileSync, writeFileSync, renameSync, openSync, readSync, closeSync, fstatSync } from 'node:fs';
import { dirname } from 'node:path';

export interface SupervisorRecord {
  pid: number;
  /** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. */
  startTime: string;
}

/** One death of HAProxy, as the supervisor saw it. */
export interface EngineExit {
  time: Date;
  /** HAProxy master's pid (0: it could not even be started). */
  pid: number;
  exitCode: number | null;
  signal: string | null;
}

/** Start time of a live process (not a zombie), undefined when there is none with that pid. */
export function processStartTime(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: fields are counted after the last ")".
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
  return fields[19];
}

export function writeSupervisorRecord(path: string, record: SupervisorRecord): void {
  writeFileSync(`${path}.tmp`, JSON.stringify(record) + '\n', { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

/**
 * The supervisor the pid file names, if that very process still runs (same pid, same start
 * time) and supervises the pid file's own folder (its first argument).
 */
export function liveSupervisor(path: string): SupervisorRecord | undefined {
  let record: SupervisorRecord;
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<SupervisorRecord>;
    if (!Number.isInteger(parsed.pid) || typeof parsed.startTime !== 'string') return undefined;
    record = { pid: parsed.pid!, startTime: parsed.startTime };
  } catch {
    return undefined;
  }
  return isAlive(record) && supervises(record.pid, dirname(path)) ? record : undefined;
}

function supervises(pid: number, workDir: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(workDir);
  } catch {
    return false;
  }
}

export function isAlive(record: SupervisorRecord): boolean {
  return record.pid > 1 && processStartTime(record.pid) === record.startTime;
}

export function exitLine(exit: EngineExit): string {
  return JSON.stringify({ time: exit.time.toISOString(), pid: exit.pid, exitCode: exit.exitCode, signal: exit.signal }) + '\n';
}

/** Deaths recorded after byte `offset` (whole lines only), and the offset after the last whole line. */
export function readExits(path: string, offset: number): { exits: EngineExit[]; offset: number } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return { exits: [], offset: 0 };
  }
  try {
    const size = fstatSync(fd).size;
    // A file shorter than what was read is a new one (a fresh start wiped it).
    const from = size < offset ? 0 : offset;
    const buffer = Buffer.alloc(Math.min(size - from, 1024 * 1024));
    const read = buffer.length ? readSync(fd, buffer, 0, buffer.length, from) : 0;
    const text = buffer.subarray(0, read).toString('utf8');
    const end = text.lastIndexOf('\n') + 1;
    const exits: EngineExit[] = [];
    for (const line of text.slice(0, end).split('\n')) {
      if (!line) continue;
      try {
        const raw = JSON.parse(line) as { time?: string; pid?: number; exitCode?: number | null; signal?: string | null };
        const time = new Date(String(raw.time));
        if (Number.isNaN(time.getTime())) continue;
        exits.push({
          time,
          pid: Number.isInteger(raw.pid) ? raw.pid! : 0,
          exitCode: typeof raw.exitCode === 'number' ? raw.exitCode : null,
          signal: typeof raw.signal === 'string' ? raw.signal : null,
        });
      } catch {
        // A line cut by a crash of the supervisor: skipped.
      }
    }
    return { exits, offset: from + Buffer.byteLength(text.slice(0, end)) };
  } finally {
    closeSync(fd);
  }
}

/** How a death reads in the daemon's output. */
export function describeExit(exit: EngineExit): string {
  const how = exit.signal ? `was killed by ${exit.signal}` : exit.pid === 0 ? 'could not be started' : `exited with code ${exit.exitCode}`;
  return `The router's HAProxy${exit.pid ? ` (pid ${exit.pid})` : ''} ${how} at ${exit.time.toISOString()}; its supervisor started it again.`;
}

/** A HAProxy that ran less than this before dying counts as dying right after its start. */
export const QUICK_DEATH_MS = 10_000;

/** The pause before the next start, by quick deaths in a row: none after one, then 250 ms doubling up to 5 s. */
export const RESTART_BACKOFF = { initialMs: 250, maxMs: 5000, immediate: 2 } as const;
