/** The wait after a name's first failed order, by default: 15 minutes, then 30, then an hour... */
export const DEFAULT_ACME_RETRY_BASE_MS = 15 * 60_000;
const MAX_WAIT_MS = 24 * 3_600_000;

/**
 * How long a name waits before its next ACME order after `failures` failed ones in a row:
 * doubled at each failure (an hour after the third by default), at most a day. One tenant's
 * names that cannot be validated then cost the shared ACME account a few orders a day, far
 * below the CA's failed-validation limits, instead of one per check.
 */
export function acmeRetryDelayMs(failures: number, baseMs = DEFAULT_ACME_RETRY_BASE_MS): number {
  return Math.min(baseMs * 2 ** Math.max(0, failures - 1), MAX_WAIT_MS);
}
