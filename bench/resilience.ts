/**
 * What clients see while slipway itself goes through trouble, one app of two instances under
 * steady load (keep-alive, HTTP/2, new connections, POSTs): failed requests and the longest
 * time any kind of client went without an answer, for a daemon restart (SIGTERM), a daemon
 * kill -9, a router (HAProxy) kill -9 and an upgrade from the previous commit's build; the
 * baseline is the same load over the same time with nothing happening, in the same run. Then
 * the time from an instance hanging to it leaving the router and to its replacement serving,
 * with the default liveness settings.
 *
 *   node --import tsx bench/resilience.ts
 */
import http from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDaemon, type TestDaemon } from '../test/support/daemon.js';
import { checkoutExample, commitAll, createApp, pushAndWait, registerSshKey } from '../test/support/deploy.js';
import { steadyLoad } from '../test/support/steady-load.js';
import { buildPreviousCommit, REPO } from '../test/support/previous-build.js';
import { waitUntil } from '../test/support/wait.js';

export interface Disturbance {
  event: string;
  requests: number;
  failed: number;
  longestGapMs: number;
}

export interface ResilienceResult {
  quiet: Disturbance;
  events: Disturbance[];
  hung: { detectedMs: number; replacedMs: number };
}

const WINDOW_MS = 4000;

async function underLoad(daemon: TestDaemon, host: string, event: string, disturb: () => Promise<void>): Promise<Disturbance> {
  const load = steadyLoad(daemon, host);
  const started = Date.now();
  await sleep(500);
  await disturb();
  // Every run covers the same time, so the gaps compare.
  await sleep(Math.max(500, WINDOW_MS - (Date.now() - started)));
  const result = await load.stop();
  const requests = Object.values(result.counts).reduce((a, b) => a + b, 0);
  return { event, requests, failed: result.failureCount, longestGapMs: result.longestGapMs };
}

/** The app's log lines with their times. */
async function appLog(daemon: TestDaemon, appId: string): Promise<Array<{ time: string; line: string }>> {
  const shown = await daemon.cli(['logs', '--app', appId, '--format', 'json', '--no-follow', '-n', '2000']);
  return shown.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { time: string; line: string });
}

export async function benchResilience(): Promise<ResilienceResult> {
  const previous = buildPreviousCommit();
  const daemon = await startDaemon();
  try {
    const { gitEnv } = await registerSshKey(daemon);
    const dir = checkoutExample('node-hello');
    const server = join(dir, 'server.js');
    const crashRoute = "  if (req.url === '/crash') {";
    writeFileSync(
      server,
      readFileSync(server, 'utf8').replace(crashRoute, "  if (req.url === '/hang') {\n    while (true) {}\n  }\n" + crashRoute),
    );
    commitAll(dir, 'a route that hangs the event loop');
    const appId = await createApp(daemon, dir, 'resilience');
    const host = `${appId}.localhost`;
    const deployed = await pushAndWait(daemon, dir, appId, gitEnv);
    if (deployed.state !== 'OK') throw new Error(`the bench app did not deploy: ${deployed.state}`);
    await daemon.cli(['scale', '--instances', '2'], { cwd: dir });

    const quiet = await underLoad(daemon, host, 'nothing (baseline)', async () => undefined);
    const events: Disturbance[] = [];
    events.push(
      await underLoad(daemon, host, 'daemon restart (SIGTERM, start)', async () => {
        await daemon.terminate();
        await daemon.restart();
      }),
    );
    events.push(
      await underLoad(daemon, host, 'daemon kill -9, start', async () => {
        await daemon.kill();
        await daemon.restart();
      }),
    );
    events.push(
      await underLoad(daemon, host, 'router (HAProxy master) kill -9', async () => {
        process.kill(Number(readFileSync(join(daemon.dataDir, 'router', 'haproxy.pid'), 'utf8')), 'SIGKILL');
      }),
    );
    // The previous build takes over (not measured), then the upgrade to this one is.
    await daemon.terminate();
    await daemon.restart({ bin: previous.bin });
    events.push(
      await underLoad(daemon, host, `upgrade from ${previous.commit}`, async () => {
        await daemon.terminate();
        await daemon.restart({ bin: join(REPO, 'bin', 'slipway.js') });
      }),
    );

    // A hung instance with the default liveness settings: a POST, which the router never replays.
    const hungAt = Date.now();
    const hang = http.request({
      host: '127.0.0.1',
      port: daemon.routerPort,
      method: 'POST',
      path: '/hang',
      headers: { host },
      agent: false,
    });
    hang.on('error', () => undefined);
    hang.end();
    setTimeout(() => hang.destroy(), 2000).unref();
    const lineTime = async (pattern: RegExp) =>
      waitUntil(`a log line ${pattern}`, async () => (await appLog(daemon, appId)).find((e) => pattern.test(e.line)), 120_000);
    const detected = await lineTime(/did not answer GET \/ for .*taken out of the router/);
    const replaced = await lineTime(/^Instance \d did not answer GET \/ for \d+ s: replaced$/);
    return {
      quiet,
      events,
      hung: { detectedMs: Date.parse(detected.time) - hungAt, replacedMs: Date.parse(replaced.time) - hungAt },
    };
  } finally {
    await daemon.stop();
  }
}

export function describeResilience(r: ResilienceResult): string {
  const line = (d: Disturbance) =>
    `  ${d.event}: ${d.failed} failed of ${d.requests + d.failed} requests, longest gap ${d.longestGapMs} ms ` +
    `(${(d.longestGapMs / Math.max(1, r.quiet.longestGapMs)).toFixed(1)}x the baseline's)`;
  return [
    `resilience, one app of two instances under steady load, ${WINDOW_MS / 1000} s windows:`,
    line(r.quiet),
    ...r.events.map(line),
    `  hung instance (default liveness settings): out of the router after ${(r.hung.detectedMs / 1000).toFixed(1)} s, ` +
      `replacement serving after ${(r.hung.replacedMs / 1000).toFixed(1)} s`,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  console.log(describeResilience(await benchResilience()));
}
