import { UsageError } from './errors.js';

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 7 * 86_400, y: 365 * 86_400 };

/** `tokens create --expires`: a lifetime such as 30s, 90m, 12h, 30d, 8w or 1y, in seconds. */
export function parseTokenLifetime(value: string): number {
  const match = /^(\d{1,6})\s*([smhdwy])$/.exec(value.trim());
  if (!match || Number(match[1]) === 0) {
    throw new UsageError(
      `--expires takes a lifetime such as 30s, 90m, 12h, 30d, 8w or 1y (seconds, minutes, hours, days, weeks, years), not ${JSON.stringify(value)}.`,
    );
  }
  return Number(match[1]) * UNIT_SECONDS[match[2]!]!;
}
