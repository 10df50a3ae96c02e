/**
 * An app's latency while another app builds on the same machine: a Node app (examples/
 * node-hello) under a steady, open-loop load through the router (a fixed rate of requests,
 * each timed from when it was due, so a stall counts in full), first with nothing else running
 * (idle), then while a real push of examples/scala-single builds (the first build: sbt, its
 * dependencies and the compilation of the app, CPU-bound on every core it can take). The
 * figure is p99 under the build over idle p99, measured in the same run; target at most 1.25.
 *
 *   node --import tsx bench/build-load.ts
 *   SLIPWAY_BENCH_RATE=100 (requests per second)  SLIPWAY_BENCH_IDLE_SECONDS=20  SLIPWAY_BENCH_ROUNDS=3
 */
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { NdjsonReader } from '../src/shared/ndjson.js';
import { startDaemon, type TestDaemon } from '../test/support/daemon.js';
import {
  checkoutExample,
  createApp,
  deploymentLog,
  gitPush,
  newRelease,
  pushAndWait,
  registerSshKey,
  waitForDeploymentOf,
} from '../test/support/deploy.js';
import type { LoadOrder, LoadOutcome } from './steady-load-worker.js';

export interface LatencyWindow {
  seconds: number;
  requests: number;
  failures: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface BuildLoadRound {
  idle: LatencyWindow;
  underBuild: LatencyWindow;
  /** The heavy build's "Build succeeded in" (seconds). */
  buildSeconds: number;
}

export interface BuildLoadResult {
  rate: number;
  /** Every round's idle requests together, and every round's requests under a build together. */
  idle: LatencyWindow;
  underBuild: LatencyWindow;
  /** underBuild.p99Ms / idle.p99Ms: target at most 1.25. */
  p99Ratio: number;
  rounds: BuildLoadRound[];
  /** The load average when the last build ended: the machine was busy. */
  loadAverage: string;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function windowOf(outcomes: LoadOutcome[]): LatencyWindow {
  const latencies = outcomes.flatMap((o) => o.latenciesMs).sort((a, b) => a - b);
  return {
    seconds: outcomes.reduce((sum, o) => sum + o.seconds, 0),
    requests: latencies.length,
    failures: outcomes.reduce((sum, o) => sum + o.failures, 0),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies[latencies.length - 1] ?? Number.NaN,
  };
}

/** A steady load (steady-load-worker.ts) on its own thread until `until` resolves. */
async function steadyLoad(daemon: TestDaemon, host: string, rate: number, until: Promise<unknown>): Promise<LoadOutcome> {
  // A worker does not get the TypeScript loader of its parent's --import: it registers it first.
  const loader = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const script = JSON.stringify(new URL('./steady-load-worker.ts', import.meta.url).href);
  const worker = new Worker(`import(${loader}).then(({ register }) => { register(); return import(${script}); })`, {
    eval: true,
    workerData: { port: daemon.routerPort, host, rate } satisfies LoadOrder,
  });
  const outcome = new Promise<LoadOutcome>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the load thread ended (${code}) before answering`)));
  });
  await until.finally(() => worker.postMessage('stop'));
  const answer = await outcome;
  await worker.terminate();
  return answer;
}

const wait = (seconds: number) => new Promise((r) => setTimeout(r, seconds * 1000));

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

/** One round: an idle window, then a first build of scala-single as a new app, with the load on throughout. */
async function round(daemon: TestDaemon, o: { host: string; rate: number; idleSeconds: number; gitEnv: NodeJS.ProcessEnv; n: number }) {
  const idle = await steadyLoad(daemon, o.host, o.rate, wait(o.idleSeconds));
  const buildDir = checkoutExample('scala-single');
  const buildId = await createApp(daemon, buildDir, `heavy-${o.n}`, {}, 'sbt');
  const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: buildDir, encoding: 'utf8' }).trim();
  const push = await gitPush(buildDir, `git+ssh://git@127.0.0.1:${daemon.sshPort}/${buildId}.git`, o.gitEnv);
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
  const underBuild = await steadyLoad(daemon, o.host, o.rate, built);
  const buildLine = buildLog.map((l) => /^Build succeeded in ([\d.]+) s$/.exec(l)).find(Boolean);
  if (!buildLine) throw new Error(`the heavy build did not succeed:\n${buildLog.join('\n')}`);
  // Its start and the heavy app itself would take CPU beside the measured app in the next round.
  await waitForDeploymentOf(daemon, buildId, commit);
  const deleted = await daemon.cli(['delete', '--app', buildId, '--yes']);
  if (deleted.code !== 0) throw new Error(`deleting the heavy app failed:\n${deleted.stderr}`);
  return { idle, underBuild, buildSeconds: Number(buildLine[1]) };
}

export async function benchBuildLoad(): Promise<BuildLoadResult> {
  const rate = Number(process.env.SLIPWAY_BENCH_RATE ?? 100);
  const idleSeconds = Number(process.env.SLIPWAY_BENCH_IDLE_SECONDS ?? 20);
  const roundCount = Number(process.env.SLIPWAY_BENCH_ROUNDS ?? 3);
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
    await steadyLoad(daemon, host, rate, wait(3));
    // Idle and build windows take turns, so that a slow drift of the machine weighs on both.
    const measured: Array<{ idle: LoadOutcome; underBuild: LoadOutcome; buildSeconds: number }> = [];
    for (let n = 1; n <= roundCount; n++) measured.push(await round(daemon, { host, rate, idleSeconds, gitEnv, n }));
    const loadAverage = execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).trim();
    const idle = windowOf(measured.map((m) => m.idle));
    const underBuild = windowOf(measured.map((m) => m.underBuild));
    return {
      rate,
      idle,
      underBuild,
      p99Ratio: underBuild.p99Ms / idle.p99Ms,
      rounds: measured.map((m) => ({ idle: windowOf([m.idle]), underBuild: windowOf([m.underBuild]), buildSeconds: m.buildSeconds })),
      loadAverage,
    };
  } finally {
    await daemon.stop();
  }
}

export function describeBuildLoad(r: BuildLoadResult): string {
  const w = (x: LatencyWindow) =>
    `p50 ${x.p50Ms.toFixed(1)} ms, p99 ${x.p99Ms.toFixed(1)} ms, max ${x.maxMs.toFixed(1)} ms (${x.requests} requests in ${x.seconds.toFixed(0)} s, ${x.failures} failed)`;
  const rounds = r.rounds
    .map(
      (x, n) =>
        `round ${n + 1}: idle p99 ${x.idle.p99Ms.toFixed(1)} ms, under a build of ${x.buildSeconds.toFixed(1)} s p99 ${x.underBuild.p99Ms.toFixed(1)} ms`,
    )
    .join('; ');
  return (
    `build-load at ${r.rate} req/s through the router, ${r.rounds.length} rounds: idle ${w(r.idle)}; during sbt builds of another app ` +
    `${w(r.underBuild)}; p99 ratio ${r.p99Ratio.toFixed(2)} (target <= 1.25); ${rounds}; load ${r.loadAverage}`
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await benchBuildLoad();
  console.log(describeBuildLoad(result));
  console.log(JSON.stringify(result));
}
