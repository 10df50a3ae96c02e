import { request } from 'node:http';

export interface PathResult {
  path: string;
  /** HTTP status, or null when no answer came. */
  status: number | null;
  /** Why there was no answer (connection refused, timeout...). */
  error?: string;
}

export interface HealthCheckOptions {
  address: string;
  port: number;
  paths: string[];
  /** How long the app may take to boot and answer, from now. */
  bootDeadlineMs: number;
  /** After the app first answers, how long a path may take to turn 200 (warm-up). */
  settleMs?: number;
  /** Stops waiting early, e.g. when the instance exited. Returns a reason to give up. */
  giveUp?: () => string | undefined;
  log(line: string): void;
}

export interface HealthCheckOutcome {
  ok: boolean;
  results: PathResult[];
  /** Set when the check stopped before any answer (boot deadline or the app exited). */
  reason?: string;
}

/** How long a booting app is asked every 20 ms before the retries slow down. */
const QUICK_RETRY_MS = 3000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * How much of a health-check answer's body is read: the status is what counts, so a body
 * longer than this (or one that never ends) is cut and its connection closed. An app cannot
 * turn its checks into work or memory for the daemon.
 */
export const HEALTH_CHECK_BODY_LIMIT = 64 * 1024;

/**
 * One GET of a path on an instance, answered or not within `timeoutMs` of silence (liveness
 * checks use it too). Once the status came, the body gets `timeoutMs` more and at most
 * `HEALTH_CHECK_BODY_LIMIT` bytes; then the connection is closed and the status stands.
 */
export function get(
  address: string,
  port: number,
  path: string,
  timeoutMs: number,
  bodyLimit = HEALTH_CHECK_BODY_LIMIT,
): Promise<PathResult> {
  return new Promise((resolve) => {
    /** Set once the status came: whatever happens to the body after that, the status stands. */
    let answered: (() => void) | undefined;
    const req = request(
      {
        host: address,
        port,
        path,
        method: 'GET',
        timeout: timeoutMs,
        headers: { 'user-agent': 'slipway-health-check', connection: 'close' },
      },
      (res) => {
        const result: PathResult = { path, status: res.statusCode ?? null };
        let read = 0;
        const enough = () => {
          clearTimeout(bodyTimer);
          resolve(result);
          // Read no further: whatever is still coming is dropped with the connection.
          res.destroy();
          req.destroy();
        };
        answered = enough;
        const bodyTimer = setTimeout(enough, timeoutMs);
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > bodyLimit) enough();
        });
        res.on('end', enough);
        res.on('error', enough);
        res.on('close', enough);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (error) => {
      if (answered) return answered();
      resolve({ path, status: null, error: (error as NodeJS.ErrnoException).code ?? error.message });
    });
    req.end();
  });
}

/**
 * docs/behaviour.md, Health checks: GET every path on the instance; all must answer exactly 200.
 * The app gets until the boot deadline to answer at all; then each path gets a short
 * settle window to reach 200 before its last answer is reported.
 */
export async function runHealthCheck(options: HealthCheckOptions): Promise<HealthCheckOutcome> {
  const { address, port, paths, log } = options;
  const settleMs = options.settleMs ?? 5000;
  const bootDeadline = Date.now() + options.bootDeadlineMs;

  // Phase 1: wait until the app answers HTTP on the first path at all. A refused connection
  // costs a few tens of µs, so for the first seconds it is tried every 20 ms (a small app is
  // up within a few hundred ms, and every ms between its first listen and our next try is on
  // the deployment's critical path; a doubling back-off wasted up to half of that), then every 250 ms.
  const quickUntil = Date.now() + QUICK_RETRY_MS;
  let first: PathResult;
  for (;;) {
    first = await get(address, port, paths[0]!, 5000);
    if (first.status !== null) break;
    const reason = options.giveUp?.();
    if (reason)
      return fail(
        paths.map((path) => ({ path, status: null, error: reason })),
        reason,
        log,
      );
    if (Date.now() > bootDeadline) {
      const why = `the application did not answer on port ${port} within ${Math.round(options.bootDeadlineMs / 1000)} s (${first.error ?? 'no answer'})`;
      return fail(
        paths.map((path) => ({ path, status: null, error: first.error })),
        why,
        log,
      );
    }
    await sleep(Date.now() < quickUntil ? 20 : 250);
  }

  // Phase 2: every path, each retried for a short while until it answers 200.
  const results: PathResult[] = [];
  for (const path of paths) {
    let result = path === paths[0] ? first : await get(address, port, path, 10_000);
    const settleUntil = Date.now() + settleMs;
    while (result.status !== 200 && Date.now() < settleUntil && !options.giveUp?.()) {
      await sleep(250);
      result = await get(address, port, path, 10_000);
    }
    results.push(result);
    log(`Response from GET ${path} is ${result.status ?? `no response (${result.error ?? 'unknown error'})`}`);
  }
  if (results.every((r) => r.status === 200)) return { ok: true, results };
  return fail(results, undefined, log, false);
}

function fail(results: PathResult[], reason: string | undefined, log: (line: string) => void, logResponses = true): HealthCheckOutcome {
  if (logResponses) {
    for (const r of results) log(`Response from GET ${r.path} is ${r.status ?? `no response (${r.error ?? 'unknown error'})`}`);
  }
  log('Health check failed:');
  for (const r of results) {
    if (r.status !== 200) log(`- GET ${r.path} returned ${r.status ?? `no response${r.error ? ` (${r.error})` : ''}`}.`);
  }
  if (reason) log(`Cause: ${reason}.`);
  log(
    'Update the health check configuration (CC_HEALTH_CHECK_PATH or CC_HEALTH_CHECK_PATH_<n>) or make every checked path answer 200, ' +
      'make sure the application listens on 0.0.0.0:8080, then redeploy.',
  );
  return { ok: false, results, reason };
}
