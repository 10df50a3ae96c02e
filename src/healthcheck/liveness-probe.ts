import { get, type PathResult } from './health-check.js';

/**
 * One liveness check of a running instance (docs/behaviour.md, Liveness): every health-check
 * path at once, straight to the instance (never through the router), each given `timeoutMs`.
 * Resolves with the first path that did not answer 200, or undefined when all did.
 */
export async function probeLiveness(
  address: string,
  port: number,
  paths: readonly string[],
  timeoutMs: number,
): Promise<PathResult | undefined> {
  const results = await Promise.all(paths.map((path) => get(address, port, path, timeoutMs)));
  return results.find((r) => r.status !== 200);
}

/**
 * How a failed check reads in the app's log: "answered GET /db with 503", "did not answer GET /"
 * and, given the timeout, "did not answer GET / within 3 s" or "did not answer GET / (ECONNREFUSED)".
 */
export function describeLivenessFailure(result: PathResult, timeoutMs?: number): string {
  if (result.status !== null) return `answered GET ${result.path} with ${result.status}`;
  const phrase = `did not answer GET ${result.path}`;
  if (timeoutMs === undefined) return phrase;
  if (/no answer within/.test(result.error ?? '')) return `${phrase} within ${formatSeconds(timeoutMs)}`;
  return `${phrase} (${result.error ?? 'no answer'})`;
}

/** "3 s", "0.5 s"; `whole` rounds to whole seconds (at least 1), for durations a person reads. */
export function formatSeconds(ms: number, whole = false): string {
  const s = whole ? Math.max(1, Math.round(ms / 1000)) : ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}
