import type { LogLine } from './follow-log.js';
import { parseSince } from './log-window.js';

/** What `slipway logs --until/--search` keep of the lines the daemon sends. */
export interface LogFilter {
  /** Lines after this time end the output (ISO time). */
  until?: string;
  /** Only lines containing this text (case-sensitive, as typed). */
  search?: string;
}

/** `--until`: the same forms as --since (a duration back from now, or a time). */
export function parseUntil(value: string, now = Date.now()): string {
  return parseSince(value, now, '--until');
}

/** Whether a line passes the search. */
export function matchesSearch(entry: LogLine, filter: LogFilter): boolean {
  return filter.search === undefined || (entry.line ?? '').includes(filter.search);
}

/** Whether a line is past --until, so nothing after it can be wanted. */
export function pastUntil(entry: LogLine, filter: LogFilter): boolean {
  return filter.until !== undefined && entry.time !== undefined && entry.time > filter.until;
}
