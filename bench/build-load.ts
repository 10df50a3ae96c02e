/**
 * An app's latency while another app builds on the same machine: a Node app (examples/
 * node-hello) under a steady, open-loop load through the router (a fixed rate of requests,
 * each timed from when it was due, so a stall counts in full), first with nothing else running
 * (idle), then while a real push of examples/scala-single builds (the first build: sbt, its
 * dependencies and the compilation of the app, CPU-bound on every core it can take). The
 * figure is p99 under the build over idle p99, measured in the same run; target at most 1.25.
 *
 *   node --import tsx bench/build-load.ts
 *   SLIPWAY_BENCH_RATE=100 (requests per second)  SLIPWAY_BENCH_IDLE_SECONDS=20
 */
import { execFileSync } from 'node:child_process';
import { Agent, request } from 'node:http';
import { pathToFileURL } from 'node:url';
import { NdjsonReader } from '../src/shared/ndjson.js';
import { startDaemon, type TestDaemon } from '../test/support/daemon.js';
import { checkoutExample, createApp, deploymentLog, gitPush, newRelease, pushAndWait, registerSshKey } from '../test/support/deploy.js';

export interface LatencyWindow {
  seconds: number;
  requests: number;
  failures: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface BuildLoadResult {
  rate: number;
  idle: LatencyWindow;
  underBuild: LatencyWindow;
  /** underBuild.p99Ms / idle.p99Ms: target at most 1.25. */
  p99Ratio: number;
  /** The heavy build's "Build succeeded in" (seconds). */
  buildSeconds: number;
  /** The load average when the build ended: the machine was busy. */
  loadAverage: string;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * Sends `rate` requests a second until `until` resolves; each latency is measured from the
 * moment its request was due (open loop: a slow answer does not slow the sending, so the
 * percentiles show what users arriving at that rate would see).
 */
async function steadyLoad(daemon: TestDaemon, host: string, rate: number, until: Promise<unknown>): Promise<LatencyWindow> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const latencies: number[] = [];
  let failures = 0;
  let stopped = false;
  void until.finally(() => (stopped = true));
  const started = performance.now();
  const pending = new Set<Promise<void>>();
  const interval = 1000 / rate;
  for (let n = 0; !stopped; n++) {
    const due = started + n * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const p = new Promise<void>((resolve) => {
      const req = request({ host: '127.0.0.1', port: daemon.routerPort, path: '/', headers: { host }, agent, timeout: 10_000 }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 200) latencies.push(performance.now() - due);
          else failures++;
          resolve();
        });
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        failures++;
        resolve();
      });
      req.end();
    });
    pending.add(p);
    void p.finally(() => pending.delete(p));
  }
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(pending);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    seconds,
    requests: latencies.length,
    failures,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies[latencies.length - 1] ?? Number.NaN,
  };
}

const api = (daemon: TestDaemon, path: string, signal?: AbortSignal) =>
  fetch(`${daemon.apiUrl}${path}`, { headers: { authorization: `Bearer ${daemon.adminToken}` }, signal });

/** The id of the deployment of `commit`, once the push has queued it. */
async function deploymentOfCommit(daemon: TestDaemon, appId: string, commit: string): Promise<string> {
  for (;;) {
    const answer = await api(daemon, `/v1/apps/${appId}/deployments?limit=5`);
    const { deployments } = (await answer.json()) as { deployments: Array<{ id: string; commit: string }> };
    const found = deployments.find((d) => d.commit === commit);
    if (found) return found.id;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Follows a deployment's log (NDJSON, one record per line) until its build phase ends; its lines so far. */
async function followUntilBuilt(daemon: TestDaemon, appId: string, deploymentId: string): Promise<string[]> {
  const abort = new AbortController();
  const answer = await api(daemon, `/v1/apps/${appId}/deployments/${deploymentId}/logs?follow=1`, abort.signal);
  if (!answer.ok || !answer.body) throw new Error(`the deployment's log answered ${answer.status}`);
  const lines: string[] = [];
  const decoder = new TextDecoder();
  const records = new NdjsonReader<{ line?: string }>();
  try {
    for await (const chunk of answer.body) {
      for (const { line } of records.push(decoder.decode(chunk, { stream: true }))) {
        if (line === undefined) continue;
        lines.push(line);
        if (/^Build (succeeded|failed)/.test(line)) return lines;
      }
    }
    return lines; // the deployment ended without a build line: the caller says so
  } finally {
    abort.abort();
  }
}

export async function benchBuildLoad(): Promise<BuildLoadResult> {
  const rate = Number(process.env.SLIPWAY_BENCH_RATE ?? 100);
  const idleSeconds = Number(process.env.SLIPWAY_BENCH_IDLE_SECONDS ?? 20);
  const daemon = await startDaemon();
  try {
    const { gitEnv } = await registerSshKey(daemon);
    const webDir = checkoutExample('node-hello');
    const webId = await createApp(daemon, webDir, 'web');
    newRelease(webDir, 'web');
    const web = await pushAndWait(daemon, webDir, webId, gitEnv);
    if (web.state !== 'OK') throw new Error((await deploymentLog(daemon, webId, web.id)).join('\n'));
    const host = `${webId}.localhost`;
    // Warm the route and the app before anything is timed.
    await steadyLoad(daemon, host, rate, new Promise((r) => setTimeout(r, 3000)));

    const idle = await steadyLoad(daemon, host, rate, new Promise((r) => setTimeout(r, idleSeconds * 1000)));

    const buildDir = checkoutExample('scala-single');
    const buildId = await createApp(daemon, buildDir, 'heavy', {}, 'sbt');
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: buildDir, encoding: 'utf8' }).trim();
    const push = gitPush(buildDir, `git+ssh://git@127.0.0.1:${daemon.sshPort}/${buildId}.git`, gitEnv);
    if (push.code !== 0) throw new Error(`git push failed:\n${push.output}`);
    // Under the build: from the push's return (the build is queued) until its build phase ends,
    // learnt from the deployment's log streamed over one HTTP request. Not through the CLI: a
    // CLI started every half second takes about 400 ms of CPU each time, beside the app, and
    // the figure would be of the bench's own polling rather than of the build.
    let buildLog: string[] = [];
    const built = (async () => {
      const deploymentId = await deploymentOfCommit(daemon, buildId, commit);
      buildLog = await followUntilBuilt(daemon, buildId, deploymentId);
    })();
    const underBuild = await steadyLoad(daemon, host, rate, built);
    const loadAverage = execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).trim();
    const buildLine = buildLog.map((l) => /^Build succeeded in ([\d.]+) s$/.exec(l)).find(Boolean);
    if (!buildLine) throw new Error(`the heavy build did not succeed:\n${buildLog.join('\n')}`);
    return { rate, idle, underBuild, p99Ratio: underBuild.p99Ms / idle.p99Ms, buildSeconds: Number(buildLine[1]), loadAverage };
  } finally {
    await daemon.stop();
  }
}

export function describeBuildLoad(r: BuildLoadResult): string {
  const w = (x: LatencyWindow) =>
    `p50 ${x.p50Ms.toFixed(1)} ms, p99 ${x.p99Ms.toFixed(1)} ms, max ${x.maxMs.toFixed(1)} ms (${x.requests} requests in ${x.seconds.toFixed(0)} s, ${x.failures} failed)`;
  return (
    `build-load at ${r.rate} req/s through the router: idle ${w(r.idle)}; during an sbt build of another app ` +
    `(${r.buildSeconds.toFixed(1)} s) ${w(r.underBuild)}; p99 ratio ${r.p99Ratio.toFixed(2)} (target <= 1.25); load ${r.loadAverage}`
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await benchBuildLoad();
  console.log(describeBuildLoad(result));
  console.log(JSON.stringify(result));
}
