import type { AccessRecord } from '../router/router.js';

/** One minute of an app's requests, as the console's charts draw it. */
export interface MinuteFigures {
  /** The minute's start, ISO time. */
  minute: string;
  requests: number;
  /** Answers with a 5xx status. */
  errors: number;
  /** 95th percentile of the request durations in milliseconds; null without requests. */
  p95_ms: number | null;
}

const MINUTE_MS = 60_000;
export const WINDOW_MINUTES = 60;

/**
 * Latency classes for percentiles: each bound 25% above the one before, from 0.25 ms to about
 * 2 minutes, so a percentile read from them is off by at most a quarter, in 60 counters.
 */
export const LATENCY_BOUNDS_MS: readonly number[] = Array.from({ length: 60 }, (_, k) => 0.25 * 1.25 ** k);

interface Bucket {
  index: number;
  requests: number;
  errors: number;
  maxMs: number;
  latency: Uint32Array;
}

/**
 * Per-app, per-minute figures of the last hour, kept in memory: counts, 5xx and a latency
 * histogram per minute (fixed size whatever the traffic), pruned as minutes pass. A daemon
 * restart starts them afresh; the access log keeps the requests themselves.
 */
export class TrafficMinutes {
  private readonly apps = new Map<string, Bucket[]>();

  constructor(private readonly now: () => number = Date.now) {}

  record(record: Pick<AccessRecord, 'appId' | 'time' | 'status' | 'durationMs'>): void {
    const index = Math.floor(record.time.getTime() / MINUTE_MS);
    const current = Math.floor(this.now() / MINUTE_MS);
    // A record from outside the window (a clock step, a late report) would only be pruned.
    if (index <= current - WINDOW_MINUTES || index > current + 1) return;
    let buckets = this.apps.get(record.appId);
    if (!buckets) this.apps.set(record.appId, (buckets = []));
    let bucket = buckets.find((b) => b.index === index);
    if (!bucket) {
      bucket = { index, requests: 0, errors: 0, maxMs: 0, latency: new Uint32Array(LATENCY_BOUNDS_MS.length + 1) };
      buckets.push(bucket);
      buckets.sort((a, b) => a.index - b.index);
      while (buckets.length && buckets[0]!.index <= current - WINDOW_MINUTES) buckets.shift();
    }
    bucket.requests++;
    if (record.status >= 500) bucket.errors++;
    const ms = Math.max(0, record.durationMs);
    bucket.maxMs = Math.max(bucket.maxMs, ms);
    bucket.latency[latencyClass(ms)]!++;
  }

  /** The last hour of an app, one entry per minute, oldest first, minutes without requests included. */
  lastHour(appId: string): MinuteFigures[] {
    const current = Math.floor(this.now() / MINUTE_MS);
    const byIndex = new Map((this.apps.get(appId) ?? []).map((b) => [b.index, b]));
    const minutes: MinuteFigures[] = [];
    for (let index = current - WINDOW_MINUTES + 1; index <= current; index++) {
      const bucket = byIndex.get(index);
      minutes.push({
        minute: new Date(index * MINUTE_MS).toISOString(),
        requests: bucket?.requests ?? 0,
        errors: bucket?.errors ?? 0,
        p95_ms: bucket ? percentile(bucket, 0.95) : null,
      });
    }
    return minutes;
  }

  forget(appId: string): void {
    this.apps.delete(appId);
  }
}

function latencyClass(ms: number): number {
  let low = 0;
  let high = LATENCY_BOUNDS_MS.length;
  // The first bound at or above ms (the last class holds everything above the last bound).
  while (low < high) {
    const mid = (low + high) >> 1;
    if (LATENCY_BOUNDS_MS[mid]! >= ms) high = mid;
    else low = mid + 1;
  }
  return low;
}

/** The bound of the class holding the q-th request, never above the slowest request seen. */
function percentile(bucket: Bucket, q: number): number {
  const rank = Math.ceil(q * bucket.requests);
  let seen = 0;
  for (let k = 0; k < bucket.latency.length; k++) {
    seen += bucket.latency[k]!;
    if (seen >= rank) {
      const bound = LATENCY_BOUNDS_MS[k] ?? bucket.maxMs;
      return round(Math.min(bound, bucket.maxMs));
    }
  }
  return round(bucket.maxMs);
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
