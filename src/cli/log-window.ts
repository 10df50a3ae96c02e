import type { OptionSpec } from './command.js';
import { UsageError } from './errors.js';

/** The part of a log to show first: `--lines` (the last n lines) and `--since`. */
export interface LogWindow {
  lines?: number;
  since?: string;
}

/** Lines of an app's output shown when neither --lines nor --since is given. */
export const DEFAULT_APP_LOG_LINES = 1000;

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--since`: a duration back from now (`90s`, `15m`, `2h`, `1d`) or a time (`2024-05-01T12:00:00Z`). */
export function parseSince(value: string, now = Date.now(), flag = '--since'): string {
  const duration = /^(\d+)\s*([smhd])$/.exec(value.trim());
  if (duration) return new Date(now - Number(duration[1]) * UNIT_MS[duration[2]!]!).toISOString();
  const time = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(time)) {
    throw new UsageError(
      `${flag} takes a duration back from now such as 90s, 15m, 2h or 1d, or a time such as 2024-05-01T12:00:00Z; not ${JSON.stringify(value)}.`,
    );
  }
  return new Date(time).toISOString();
}

export function parseLines(value: string): number {
  if (!/^\d{1,9}$/.test(value.trim()))
    throw new UsageError(`--lines takes a whole number of lines such as 100, not ${JSON.stringify(value)}.`);
  return Number(value);
}

/** The query of a log request for this window. */
export function windowQuery(window: LogWindow): string {
  const query = new URLSearchParams();
  if (window.lines !== undefined) query.set('lines', String(window.lines));
  if (window.since !== undefined) query.set('since', window.since);
  const text = query.toString();
  return text ? `?${text}` : '';
}

/** `--since` and `--until`, as every log command takes them (parsed by parseSince and parseUntil). */
export const TIME_WINDOW_OPTIONS = {
  since: {
    type: 'string',
    value: '<when>',
    description: 'Start at this time: a duration back from now (90s, 15m, 2h, 1d) or a time (2024-05-01T12:00:00Z)',
  },
  until: {
    type: 'string',
    value: '<when>',
    description: 'Stop at this time (same forms as --since); a time already past means no following',
  },
} satisfies OptionSpec;
