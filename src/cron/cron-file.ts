import { createHash } from 'node:crypto';
import { PlanError } from '../core/errors.js';
import { findJsonError, lineAndColumn } from '../providers/node/json-error-position.js';
import type { UntrustedTree } from '../sandbox/untrusted-tree.js';
import { parseSchedule, ScheduleError } from './schedule.js';

/** Where the reference service reads an app's cron jobs, relative to the repository's root. */
export const CRON_FILE = 'clevercloud/cron.json';
/** More jobs than this is a mistake rather than a schedule. */
export const MAX_JOBS = 100;
const MAX_FILE_BYTES = 64 * 1024;

/**
 * One job of `clevercloud/cron.json`, as the release keeps it: the command stays as written,
 * `$ROOT` and all, and is completed at each run with the release's folder.
 */
export interface CronJobSpec {
  /** `cron-<n>`, n its place in the file (1 for the first): what its log lines are marked with. */
  name: string;
  /** Which state and runs are its own across deployments: the same schedule and command keep them. */
  key: string;
  /** Line of the file the entry starts on. */
  line: number;
  /** The five fields, single-spaced. */
  schedule: string;
  command: string;
}

const HINT_END = 'fix clevercloud/cron.json, commit and push again';

/** Offsets of the strings of a JSON array of strings (the text is known to be one). */
function elementOffsets(text: string): number[] {
  const offsets: number[] = [];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '[') depth++;
    else if (ch === ']') depth--;
    else if (ch === '"') {
      if (depth === 1) offsets.push(i);
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    }
  }
  return offsets;
}

/** The command's first word must be an absolute path, as crontab wants (docs/behaviour.md, Cron jobs). */
function checkCommand(command: string): void {
  if (command === '') throw new ScheduleError('there is no command after the five fields');
  const program = command.split(/\s+/)[0]!;
  if (program.startsWith('${ROOT}'))
    throw new ScheduleError('the command starts with ${ROOT}, which is not replaced: write $ROOT (no braces)');
  if (!program.startsWith('/') && !program.startsWith('$ROOT/'))
    throw new ScheduleError('the command is not an absolute path (it starts with neither / nor $ROOT/)');
}

/** One entry: "M H d m w command". Throws a ScheduleError saying what is wrong with it. */
export function parseCronEntry(entry: string): { schedule: string; command: string } {
  const text = entry.trim();
  if (text.startsWith('@reboot')) throw new ScheduleError('@reboot is not available: jobs run on a schedule only');
  if (text.startsWith('@'))
    throw new ScheduleError('shortcuts starting with @ are not available: write the five fields (@daily is 0 0 * * *)');
  const parts = text.split(/\s+/);
  if (parts.length < 6) throw new ScheduleError(`an entry has five schedule fields and a command, this one has ${parts.length} part(s)`);
  const { schedule } = parseSchedule(parts.slice(0, 5));
  const command = text.replace(/^(\S+\s+){5}/, '').trim();
  checkCommand(command);
  return { schedule, command };
}

function keyOf(schedule: string, command: string, seen: Map<string, number>): string {
  const base = createHash('sha256').update(`${schedule}\n${command}`).digest('hex').slice(0, 16);
  const n = (seen.get(base) ?? 0) + 1;
  seen.set(base, n);
  return n === 1 ? base : `${base}-${n}`;
}

/**
 * The jobs of a `clevercloud/cron.json` text: a JSON array of strings. Throws a PlanError naming
 * the line and the reason (never quoting the text: the daemon read it with root's rights).
 */
export function parseCronFile(text: string): CronJobSpec[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    const where = findJsonError(text);
    throw new PlanError(
      where
        ? `${CRON_FILE} is not valid JSON: ${where.reason} at line ${where.line}, column ${where.column}.`
        : `${CRON_FILE} is not valid JSON.`,
      `It is a JSON array of strings such as "*/5 * * * * $ROOT/bin/task": ${HINT_END}.`,
    );
  }
  if (!Array.isArray(parsed)) {
    throw new PlanError(
      `${CRON_FILE} is not a JSON array (line 1).`,
      `It is a JSON array of strings such as ["0 3 * * * /usr/bin/env node $ROOT/purge.js"]: ${HINT_END}.`,
    );
  }
  if (parsed.length > MAX_JOBS)
    throw new PlanError(`${CRON_FILE} has ${parsed.length} jobs; at most ${MAX_JOBS} are taken.`, `Merge jobs: ${HINT_END}.`);
  const offsets = parsed.every((e) => typeof e === 'string') ? elementOffsets(text) : [];
  const seen = new Map<string, number>();
  return parsed.map((entry, index): CronJobSpec => {
    const n = index + 1;
    if (typeof entry !== 'string') {
      throw new PlanError(
        `${CRON_FILE}, entry ${n}: it is not a string (each entry is one string, "M H d m w command").`,
        `Write it as a string such as "0 * * * * $ROOT/hourly.sh": ${HINT_END}.`,
      );
    }
    const line = offsets[index] === undefined ? 1 : lineAndColumn(text, offsets[index]!).line;
    try {
      const { schedule, command } = parseCronEntry(entry);
      return { name: `cron-${n}`, key: keyOf(schedule, command, seen), line, schedule, command };
    } catch (error) {
      if (!(error instanceof ScheduleError)) throw error;
      throw new PlanError(
        `${CRON_FILE}, line ${line} (entry ${n}): ${error.message}.`,
        `Each entry is "M H d m w command": five cron fields in UTC, then a command starting with an absolute path or $ROOT/; ${HINT_END}.`,
      );
    }
  });
}

/**
 * The jobs of the build folder's `clevercloud/cron.json`, none without the file. Read through the
 * untrusted tree: a link leading out of it, a folder or a fifo there is refused, never followed.
 */
export async function readCronJobs(tree: UntrustedTree): Promise<CronJobSpec[]> {
  const text = await tree.readText(CRON_FILE, { maxBytes: MAX_FILE_BYTES });
  if (text === undefined) return [];
  return parseCronFile(text);
}

/** The command a run executes: `$ROOT` (the token, not `${ROOT}`) becomes the release's folder. */
export function runArgv(command: string, releaseDir: string): string[] {
  return ['/bin/sh', '-c', command.replaceAll(/\$ROOT(?![A-Za-z0-9_])/g, () => releaseDir)];
}
