/**
 * Delay before restarting a crashed instance: starts at initialMs, doubles with each crash in
 * a row up to maxMs, and starts over once an instance stayed up for resetAfterMs, so a crash
 * loop slows down while a rare crash of a long-lived instance is retried quickly.
 */
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  resetAfterMs: number;
}

/**
 * The wait before the restart that follows `inARow` earlier failures in a row (0: the first
 * failure): none for the first `immediate` of them, then `initialMs` doubling up to `maxMs`.
 * The one doubling back-off: RestartBackoff below and the router's HAProxy supervisor use it.
 */
export function backoffDelay(inARow: number, p: { initialMs: number; maxMs: number; immediate?: number }): number {
  const doublings = inARow - (p.immediate ?? 0);
  return doublings < 0 ? 0 : Math.min(p.maxMs, p.initialMs * 2 ** doublings);
}

export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 30_000, resetAfterMs: 60_000 };

export class RestartBackoff {
  private consecutive = 0;

  constructor(private readonly policy: BackoffPolicy = DEFAULT_BACKOFF) {}

  /** Records a crash after `uptimeMs` of running and returns how long to wait before restarting. */
  nextDelay(uptimeMs: number): number {
    if (uptimeMs >= this.policy.resetAfterMs) this.consecutive = 0;
    const delay = backoffDelay(this.consecutive, this.policy);
    if (delay < this.policy.maxMs) this.consecutive++;
    return delay;
  }
}
