import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId } from '../core/ids.js';
import { LogHub, type LogEntry } from '../logs/log-hub.js';
import { DEFAULT_LOG_LIMITS } from '../logs/log-limits.js';
import { readTail } from '../logs/tail-reader.js';
import { PlatformMetrics } from '../metrics/platform-metrics.js';
import { AccessLog, ACCESS_LOG_LIMITS, MAX_LOGGED_PATH, type AccessEntry } from './access-log.js';
import type { AccessRecord } from '../router/router.js';
import { TrafficMinutes } from './traffic-minutes.js';
import { TrafficRecorder } from './traffic-recorder.js';

/** Access records the router reports dropped, as a test sets it. */
let droppedByRouter = 3;

function recorder() {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-traffic-'));
  const hub = new LogHub(join(dir, 'access-logs'), { limits: { ...DEFAULT_LOG_LIMITS, app: ACCESS_LOG_LIMITS } });
  const deployments = { WIP: 1, OK: 3 };
  const metrics = new PlatformMetrics({
    deploymentsByState: () => deployments,
    activeConnections: () => 4,
    appConnections: () =>
      new Map([
        ['app_busy', 2],
        ['app_idle', 0],
      ]),
    droppedAccessRecords: () => droppedByRouter,
  });
  return { dir, hub, recorder: new TrafficRecorder(new AccessLog(hub), new TrafficMinutes(), metrics) };
}

function request(appId: string, fields: Partial<AccessRecord> = {}): AccessRecord {
  return {
    time: new Date(),
    appId,
    host: `${appId}.localhost`,
    client: '10.0.0.9',
    method: 'GET',
    path: '/',
    status: 200,
    bytes: 12,
    durationMs: 1.25,
    instance: '10.77.0.5:8080',
    tls: false,
    ...fields,
  };
}

async function stored(hub: LogHub, key: string): Promise<LogEntry[]> {
  const { snapshot } = await hub.snapshot(key);
  const chunks: Buffer[] = [];
  for await (const chunk of readTail(snapshot, {})) chunks.push(chunk);
  return Buffer.concat(chunks)
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as LogEntry);
}

test('a request lands in the access log, the per-minute figures and the Prometheus series alike', async () => {
  const { dir, hub, recorder: r } = recorder();
  const app = newId('app');
  r.onRequest(request(app, { method: 'POST', path: '/orders?id=3', status: 201, bytes: 99, durationMs: 12.345 }));
  r.onRequest(request(app, { status: 503, instance: '' }));
  const entries = (await stored(hub, app)) as AccessEntry[];
  assert.equal(entries.length, 2);
  assert.deepEqual(
    { ...entries[0], time: undefined },
    {
      time: undefined,
      stream: 'access',
      line: '10.0.0.9 POST /orders?id=3 201 99 B 12.3 ms 10.77.0.5:8080',
      host: `${app}.localhost`,
      client: '10.0.0.9',
      method: 'POST',
      path: '/orders?id=3',
      status: 201,
      bytes: 99,
      duration_ms: 12.3,
      instance: '10.77.0.5:8080',
      tls: false,
    },
  );
  assert.equal(entries[1]!.instance, '-');
  assert.deepEqual(r.minutes.lastHour(app).at(-1)!.requests, 2);
  assert.deepEqual(r.minutes.lastHour(app).at(-1)!.errors, 1);
  const text = await r.metrics.text();
  assert.match(text, new RegExp(`slipway_http_requests_total\\{app="${app}",status="201"\\} 1`));
  assert.match(text, new RegExp(`slipway_http_requests_total\\{app="${app}",status="503"\\} 1`));
  assert.match(text, new RegExp(`slipway_http_request_duration_seconds_count\\{app="${app}"\\} 2`));
  assert.match(text, /slipway_router_active_connections 4/);
  assert.match(text, /^slipway_router_app_connections\{app="app_busy"\} 2$/m);
  assert.match(text, /^slipway_router_app_connections\{app="app_idle"\} 0$/m);
  assert.match(text, /^slipway_router_access_records_dropped_total 3$/m);
  droppedByRouter = 5;
  assert.match(await r.metrics.text(), /^slipway_router_access_records_dropped_total 5$/m, 'the counter follows the router');
  assert.match(text, /slipway_deployments\{state="OK"\} 3/);
  assert.match(text, /slipway_deployments\{state="FAIL"\} 0/);
  assert.match(text, /slipway_daemon_process_cpu_seconds_total/);
  rmSync(dir, { recursive: true, force: true });
});

test('long paths are cut, records for something that is not an app id are not stored', async () => {
  const { dir, hub, recorder: r } = recorder();
  const app = newId('app');
  r.onRequest(request(app, { path: '/' + 'a'.repeat(10_000) }));
  r.onRequest(request('../../etc/passwd'));
  const [entry] = (await stored(hub, app)) as AccessEntry[];
  assert.equal(entry!.path.length, MAX_LOGGED_PATH);
  rmSync(dir, { recursive: true, force: true });
});

test('a deleted app loses its access log, figures and series', async () => {
  const { dir, hub, recorder: r } = recorder();
  const app = newId('app');
  r.onRequest(request(app));
  r.metrics.instanceRestarted(app);
  await r.forgetApp(app);
  assert.deepEqual(await stored(hub, app), []);
  assert.equal(r.minutes.lastHour(app).at(-1)!.requests, 0);
  assert.doesNotMatch(await r.metrics.text(), new RegExp(app));
  rmSync(dir, { recursive: true, force: true });
});

test('deployment, build and restart figures', async () => {
  const { dir, recorder: r } = recorder();
  const app = newId('app');
  r.metrics.deploymentFinished('OK', 3.2);
  r.metrics.deploymentFinished('FAIL', 40);
  r.metrics.buildFinished('success', 2.5);
  r.metrics.instanceRestarted(app);
  r.metrics.instanceRestarted(app);
  const text = await r.metrics.text();
  assert.match(text, /slipway_deployment_duration_seconds_count\{state="OK"\} 1/);
  assert.match(text, /slipway_deployment_duration_seconds_bucket\{le="60",state="FAIL"\} 1/);
  assert.match(text, /slipway_build_duration_seconds_sum\{outcome="success"\} 2.5/);
  assert.match(text, new RegExp(`slipway_instance_restarts_total\\{app="${app}"\\} 2`));
  rmSync(dir, { recursive: true, force: true });
});
