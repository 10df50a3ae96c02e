/**
 * The first request after a sleep (issue 35, item 4): the Node example app (examples/node-hello)
 * with `--min-instances 0` and a short idle time sleeps SLEEPS times; after each sleep one GET on a
 * new connection wakes it, and its latency is measured. The baseline is the app's own start time
 * in the same run: the time `PUT /v1/apps/:app/scale` takes to add one instance (started and
 * passed its health check; the API answers once it serves), measured START_ROUNDS times.
 * Target: p95 of the first request <= the start time's median + 0.5 s, and no error.
 *
 *   node --import tsx bench/scale-to-zero.ts
 */
import { request } from 'node:http';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDaemon, type TestDaemon } from '../test/support/daemon.js';
import { checkoutExample, createApp, pushAndWait, registerSshKey } from '../test/support/deploy.js';

const SLEEPS = 10;
const START_ROUNDS = 5;
const SETTINGS = 'idle-after=2s,cooldown=2s';

export interface ScaleToZeroBenchResult {
  /** The app's start (one instance added, health-checked), ms, each round. */
  startsMs: number[];
  /** The first request after each sleep, ms. */
  firstRequestsMs: number[];
  errors: number;
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0;
};

function get(daemon: TestDaemon, host: string): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port: daemon.routerPort, path: '/', agent: false, timeout: 90_000, headers: { host, connection: 'close' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: Date.now() - started }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve({ status: 0, ms: Date.now() - started }));
    req.end();
  });
}

async function api(daemon: TestDaemon, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${daemon.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${daemon.adminToken}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}

const asleepSince = async (daemon: TestDaemon, appId: string) =>
  ((await api(daemon, 'GET', `/v1/apps/${appId}/scale`)).scale as { asleep_since: string | null }).asleep_since;

export async function benchScaleToZero(): Promise<ScaleToZeroBenchResult> {
  const daemon = await startDaemon();
  try {
    const { gitEnv } = await registerSshKey(daemon);
    const dir = checkoutExample('node-hello');
    const appId = await createApp(daemon, dir, 'sleeper');
    const deployed = await pushAndWait(daemon, dir, appId, gitEnv);
    if (deployed.state !== 'OK') throw new Error(`the bench app did not deploy: ${deployed.state}`);
    const host = `${appId}.localhost`;

    // The baseline: one instance added and health-checked, as a wake starts one.
    const startsMs: number[] = [];
    for (let k = 0; k < START_ROUNDS; k++) {
      const started = Date.now();
      await api(daemon, 'PUT', `/v1/apps/${appId}/scale`, { instances: 2 });
      startsMs.push(Date.now() - started);
      await api(daemon, 'PUT', `/v1/apps/${appId}/scale`, { instances: 1 });
      await sleep(3000);
    }

    await api(daemon, 'PUT', `/v1/apps/${appId}/scale`, { minInstances: 0, maxInstances: 1, autoscaling: SETTINGS });
    const firstRequestsMs: number[] = [];
    let errors = 0;
    for (let k = 0; k < SLEEPS; k++) {
      const deadline = Date.now() + 60_000;
      while (!(await asleepSince(daemon, appId))) {
        if (Date.now() > deadline) throw new Error('the app did not sleep within 60 s');
        await sleep(250);
      }
      // The instance drains and stops after the sleep: the wake starts a new one from nothing.
      await sleep(3000);
      const first = await get(daemon, host);
      firstRequestsMs.push(first.ms);
      if (first.status !== 200) errors++;
    }
    return { startsMs, firstRequestsMs, errors };
  } finally {
    await daemon.stop();
  }
}

export function describeScaleToZero(r: ScaleToZeroBenchResult): string {
  const start = quantile(r.startsMs, 0.5);
  const [p50, p95, max] = [quantile(r.firstRequestsMs, 0.5), quantile(r.firstRequestsMs, 0.95), Math.max(...r.firstRequestsMs)];
  const met = p95 <= start + 500 && r.errors === 0;
  return [
    `scale to zero, Node example app, ${r.firstRequestsMs.length} sleeps (${SETTINGS}):`,
    `  the app's start (an instance added and health-checked, baseline): median ${start} ms (${r.startsMs.join(', ')} ms)`,
    `  first request after a sleep: p50 ${p50} ms, p95 ${p95} ms, max ${max} ms; ${r.errors} error(s); ` +
      `p95 - start ${p95 - start} ms (${(p95 / start).toFixed(2)}× the start)`,
    `  target: p95 <= start + 500 ms and 0 errors (${met ? 'met' : 'missed'})`,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  console.log(describeScaleToZero(await benchScaleToZero()));
}
