/**
 * What the edge shows, through the real router: requests to an app appear in
 * `slipway accesslogs` (stored and followed), in its per-minute figures and in the Prometheus
 * metrics, which the API serves to administrators and --metrics-listen to anyone on its address.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { SLIPWAY_BIN } from '../support/cli.js';
import { checkoutExample, createApp, getThroughRouter, pushAndWait, registerSshKey } from '../support/deploy.js';
import { freePort } from '../support/free-port.js';
import { waitUntil } from '../support/wait.js';

let daemon: TestDaemon;
let dir: string;
let appId: string;
let metricsPort: number;

before(async () => {
  metricsPort = await freePort();
  daemon = await startDaemon(['--metrics-listen', `127.0.0.1:${metricsPort}`]);
  const { gitEnv } = await registerSshKey(daemon);
  dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'observed');
  const deployed = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(deployed.state, 'OK', deployed.push);
});

after(async () => {
  await daemon?.stop();
});

async function request(path: string): Promise<number> {
  return (await getThroughRouter(daemon, `${appId}.localhost`, path)).status;
}

async function accessLines(args: string[] = []): Promise<string> {
  const r = await daemon.cli(['accesslogs', '--app', appId, '--no-follow', ...args], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

async function metricsText(url: string, token?: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: response.status, text: await response.text() };
}

function counter(text: string, name: string, labels: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

test('requests show in slipway accesslogs with time, client, method, path, status, bytes, duration and instance', async () => {
  assert.equal(await request('/observed?n=1'), 200);
  assert.equal(await request('/missing'), 404);
  const stored = await waitUntil(
    'both requests in the access log',
    async () => {
      const out = await accessLines();
      return /\/observed\?n=1/.test(out) && /\/missing\b/.test(out) ? out : undefined;
    },
    30_000,
  );
  const line = stored.split('\n').find((l) => l.includes('/observed?n=1'))!;
  // <time> <client> <method> <path> <status> <bytes> B <duration> ms <instance>
  assert.match(line, /^\d{4}-\d\d-\d\dT\S+Z \S+ GET \/observed\?n=1 200 \d+ B [\d.]+ ms \d+\.\d+\.\d+\.\d+:\d+$/);

  const json = await daemon.cli(['accesslogs', '--app', appId, '--no-follow', '--format', 'json'], { cwd: dir });
  const records = json.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const missing = records.find((r) => r.path === '/missing')!;
  assert.equal(missing.method, 'GET');
  assert.equal(missing.status, 404);
  assert.equal(missing.host, `${appId}.localhost`);
  assert.equal(missing.tls, false);
  assert.equal(typeof missing.duration_ms, 'number');
  assert.ok((missing.bytes as number) > 0);
  assert.match(String(missing.instance), /^\d+\.\d+\.\d+\.\d+:\d+$/);
  assert.match(String(missing.client), /^[\d.:a-f]+$/);

  // --lines and --since window it like `slipway logs`.
  assert.equal((await accessLines(['-n', '1'])).trim().split('\n').length, 1);
  assert.equal((await accessLines(['--since', '2999-01-01T00:00:00Z'])).trim(), '');
});

test('accesslogs --follow prints a new request as it is served', async () => {
  const child = spawn(process.execPath, [SLIPWAY_BIN, 'accesslogs', '--app', appId, '--follow', '-n', '0'], {
    cwd: dir,
    env: { ...process.env, SLIPWAY_URL: daemon.apiUrl, SLIPWAY_TOKEN: daemon.adminToken },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  try {
    // A request served before the follower is connected is not printed (-n 0), and the router
    // reports requests at once: ask again until the follower, connected, prints one.
    await waitUntil(
      'the followed request printed',
      async () => {
        if (output.includes('/followed-live')) return true;
        assert.equal(await request('/followed-live'), 200);
        await new Promise((r) => setTimeout(r, 500));
        return undefined;
      },
      30_000,
    );
    assert.equal(child.exitCode, null, `accesslogs --follow returned:\n${output}`);
    assert.doesNotMatch(output, /\/observed/, '-n 0 starts with no stored request');
  } finally {
    child.kill('SIGTERM');
  }
});

test('per-minute figures and Prometheus metrics count the same requests; /metrics needs an administrator token', async () => {
  const before = await waitUntil(
    'the earlier requests counted',
    async () => {
      const { text } = await metricsText(`${daemon.apiUrl}/metrics`, daemon.adminToken);
      return counter(text, 'slipway_http_requests_total', `app="${appId}",status="404"`) >= 1 ? text : undefined;
    },
    30_000,
  );
  const ok200 = counter(before, 'slipway_http_requests_total', `app="${appId}",status="200"`);
  for (let i = 0; i < 3; i++) assert.equal(await request(`/counted-${i}`), 200);
  const after = await waitUntil(
    'three more 200s counted',
    async () => {
      const { text } = await metricsText(`${daemon.apiUrl}/metrics`, daemon.adminToken);
      return counter(text, 'slipway_http_requests_total', `app="${appId}",status="200"`) >= ok200 + 3 ? text : undefined;
    },
    30_000,
  );
  assert.ok(counter(after, 'slipway_http_request_duration_seconds_count', `app="${appId}"`) >= ok200 + 4);
  assert.ok(counter(after, 'slipway_deployments', 'state="OK"') >= 1, 'deployments by state');
  assert.ok(counter(after, 'slipway_deployment_duration_seconds_count', 'state="OK"') >= 1, 'deployment durations');
  assert.ok(counter(after, 'slipway_build_duration_seconds_count', 'outcome="success"') >= 1, 'build durations');
  assert.match(after, /^# TYPE slipway_instance_restarts_total counter$/m);
  assert.match(after, /^# TYPE slipway_router_active_connections gauge$/m);
  // HAProxy's DroppedLogs: every record so far reached the daemon, and a loss would show here.
  assert.match(after, /^slipway_router_access_records_dropped_total 0$/m);

  const refused = await metricsText(`${daemon.apiUrl}/metrics`);
  assert.equal(refused.status, 401);
  const open = await metricsText(`http://127.0.0.1:${metricsPort}/metrics`);
  assert.equal(open.status, 200);
  assert.ok(
    counter(open.text, 'slipway_http_requests_total', `app="${appId}",status="200"`) >= ok200 + 3,
    '--metrics-listen serves the same figures',
  );

  const response = await fetch(`${daemon.apiUrl}/v1/apps/${appId}/traffic`, { headers: { authorization: `Bearer ${daemon.adminToken}` } });
  const { minutes } = (await response.json()) as { minutes: Array<{ requests: number; errors: number; p95_ms: number | null }> };
  assert.equal(minutes.length, 60);
  const lastHour = minutes.reduce((n, m) => n + m.requests, 0);
  assert.ok(lastHour >= ok200 + 4, `the minutes count every request (${lastHour})`);
  assert.ok(minutes.some((m) => m.p95_ms !== null && m.p95_ms >= 0));
});

/** A gauge's value, undefined when the series is absent. */
function gauge(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

test("open connections: the router's clients, and each app's from HAProxy's backend sessions", async () => {
  const scrape = async () => (await metricsText(`http://127.0.0.1:${metricsPort}/metrics`)).text;
  const appSeries = `slipway_router_app_connections{app="${appId}"}`;
  // Finished requests leave none open on the app (an idle keep-alive client is not attached to it).
  assert.equal(gauge(await scrape(), appSeries), 0, 'every routed app has a series, 0 when idle');
  // An upgraded connection (the example echoes an Upgrade) stays attached to the app's instance.
  const socket = connect(daemon.routerPort, '127.0.0.1');
  try {
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write(`GET /held HTTP/1.1\r\nHost: ${appId}.localhost\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n`);
    const head = await new Promise<string>((resolve, reject) =>
      socket.once('data', (data) => resolve(data.toString())).once('error', reject),
    );
    assert.match(head, /^HTTP\/1\.1 101 /);
    const held = await scrape();
    assert.ok(
      (gauge(held, appSeries) ?? 0) >= 1,
      `the app's held connection is counted:\n${held
        .split('\n')
        .filter((l) => l.includes('connections'))
        .join('\n')}`,
    );
    assert.ok((gauge(held, 'slipway_router_active_connections') ?? 0) >= 1, 'the client connection is counted');
  } finally {
    socket.destroy();
  }
});

test('a crash restart is counted', async () => {
  const restartsBefore = counter(
    (await metricsText(`http://127.0.0.1:${metricsPort}/metrics`)).text,
    'slipway_instance_restarts_total',
    `app="${appId}"`,
  );
  await getThroughRouter(daemon, `${appId}.localhost`, '/crash').catch(() => undefined);
  await waitUntil(
    'the restart counted',
    async () => {
      const { text } = await metricsText(`http://127.0.0.1:${metricsPort}/metrics`);
      return counter(text, 'slipway_instance_restarts_total', `app="${appId}"`) > restartsBefore ? true : undefined;
    },
    30_000,
  );
});
