/**
 * Push-to-live: the time from `git push` to a deployment answering through the router, for a
 * hello-world app with an empty (cold) toolchain cache and then with a warm one; and, in the
 * same run, wrk against the deployed instance directly and through the router. A warm redeploy
 * is timed twice, in rounds (medians): from `git push` to the new release's first 200 through
 * the router, and as a user sees it, `slipway deploy` from its start to its return (it returns
 * after the deployment is OK, so after the router serves the new release), split into the
 * CLI's start-up and questions to the API, the push, and the deployment after the push.
 * bench/push-to-live.md has the figures and what they led to.
 *
 *   node --import tsx bench/push-to-live.ts      (SLIPWAY_BENCH_ROUNDS rounds, default 5)
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startDaemon } from '../test/support/daemon.js';
import { SLIPWAY_BIN } from '../test/support/cli.js';
import {
  checkoutExample,
  createApp,
  newRelease,
  pushAndWait,
  registerSshKey,
  getThroughRouter,
  waitForDeploymentOf,
} from '../test/support/deploy.js';
import { wrkArgv, parseWrk, type WrkResult } from './router.js';

export interface PushToLiveResult {
  coldSeconds: number;
  warmSeconds: number;
  /** warm / cold: how much of the first deploy's time a deploy with cached toolchains takes. */
  warmOverCold: number;
  direct: WrkResult;
  routed: WrkResult;
  /** routed / direct requests per second against the same deployed instance. */
  routerRatio: number;
  /** A new release of the warm app, from `git push` to its first 200 through the router (target <= 1.0 s): the median of the rounds. */
  redeploySeconds: number;
  /** Each round's figure of redeploySeconds. */
  redeployRounds: number[];
  /** A new release of the warm app by `slipway deploy`, from the CLI's start to its return (target <= 1.2 s): the median of the rounds. */
  cliRedeploySeconds: number;
  /** Each round of `slipway deploy`, with where its time went. */
  cliRedeployRounds: CliRedeploy[];
  /** `slipway --version` from start to exit: what any command pays before its own work (median). */
  cliStartSeconds: number;
  /** The same app by hand: `npm install`, start, one request (the median of the rounds). */
  floorSeconds: number;
  /** The redeploy's deployment log, each line with its time since `git push` started, to see where the time went. */
  redeployLog: string[];
}

/** One `slipway deploy` of a new release, timed from the CLI's start (each phase from its stderr lines). */
export interface CliRedeploy {
  /** Start to return. */
  seconds: number;
  /** Start to "Pushing …": loading the CLI, reading the link, asking the API and git. */
  beforePush: number;
  /** "Pushing …" to git's last line ("<old>..<new> <commit> -> master"): the push over SSH. */
  push: number;
  /** The push's end to the CLI's return: the deployment, followed through its log. */
  afterPush: number;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** Runs the slipway CLI; resolves with its exit code, its wall time and each stderr line's time since its start. */
function timedCli(args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; seconds: number; lines: Array<{ at: number; text: string }> }>((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [SLIPWAY_BIN, ...args], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    const lines: Array<{ at: number; text: string }> = [];
    let partial = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      const at = (performance.now() - started) / 1000;
      const parts = (partial + chunk).split('\n');
      partial = parts.pop()!;
      for (const text of parts) lines.push({ at, text });
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, seconds: (performance.now() - started) / 1000, lines }));
  });
}

/**
 * `slipway deploy` of a new release, as a user runs it in the app's folder. The CLI returns once
 * the deployment is OK, and the router switched before that: the new release must answer at once.
 */
async function timedCliRedeploy(
  dir: string,
  host: string,
  release: string,
  daemon: Awaited<ReturnType<typeof startDaemon>>,
  env: NodeJS.ProcessEnv,
): Promise<CliRedeploy> {
  newRelease(dir, release);
  const run = await timedCli(['deploy'], dir, env);
  const log = run.lines.map((l) => `+${l.at.toFixed(2)} s  ${l.text}`).join('\n');
  if (run.code !== 0) throw new Error(`slipway deploy exited with ${run.code}:\n${log}`);
  const served = await getThroughRouter(daemon, host);
  if (served.status !== 200 || !served.body.includes(`"release":"${release}"`))
    throw new Error(`slipway deploy returned before the new release served (${served.status} ${served.body}):\n${log}`);
  const at = (pattern: RegExp) => run.lines.find((l) => pattern.test(l.text))?.at;
  const pushing = at(/^Pushing /);
  const pushed = at(/ -> master$/);
  if (pushing === undefined || pushed === undefined) throw new Error(`slipway deploy did not print the push as expected:\n${log}`);
  return { seconds: run.seconds, beforePush: pushing, push: pushed - pushing, afterPush: run.seconds - pushed };
}

/** The floor: what a redeploy cannot beat, the app's own install and start, done by hand. */
async function floorSeconds(): Promise<number> {
  const dir = checkoutExample('node-hello');
  // The example listens on 8080 whatever PORT says, as apps on the platform do.
  const url = 'http://127.0.0.1:8080/';
  if (
    await fetch(url).then(
      () => true,
      () => false,
    )
  )
    throw new Error('Something already answers on 127.0.0.1:8080: the floor cannot be measured.');
  const started = performance.now();
  await new Promise<void>((resolve, reject) =>
    execFile('npm', ['install', '--no-audit', '--no-fund'], { cwd: dir }, (e) => (e ? reject(e) : resolve())),
  );
  const child = spawn(process.execPath, ['server.js'], { cwd: dir, stdio: 'ignore' });
  try {
    const deadline = started + 60_000;
    for (;;) {
      const ok = await fetch(url).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      if (performance.now() > deadline || child.exitCode !== null)
        throw new Error('The example app did not answer on 127.0.0.1:8080 within 60 s.');
      await new Promise((r) => setTimeout(r, 5));
    }
    return (performance.now() - started) / 1000;
  } finally {
    child.kill('SIGTERM');
  }
}

/**
 * A new release pushed to a deployed app: timed from the start of `git push` until the router
 * serves the new release, asking the router all along (polling the deployment's state through
 * the CLI would add its own start-up time to the figure). Returns the deployment's log too, to
 * show where the time goes.
 */
async function timedRedeploy(
  dir: string,
  appId: string,
  host: string,
  daemon: Awaited<ReturnType<typeof startDaemon>>,
  gitEnv: NodeJS.ProcessEnv,
  release: string,
) {
  newRelease(dir, release);
  const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();
  const url = `git+ssh://git@127.0.0.1:${daemon.sshPort}/${appId}.git`;
  const started = performance.now();
  const pushedAt = Date.now();
  const push = new Promise<void>((resolve, reject) =>
    execFile('git', ['push', url, 'master'], { cwd: dir, env: gitEnv, timeout: 120_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`git push failed:\n${stdout}${stderr}`)) : resolve(),
    ),
  );
  let pushFailed: unknown;
  push.catch((error: unknown) => (pushFailed = error));
  for (;;) {
    if (pushFailed) throw pushFailed;
    const r = await getThroughRouter(daemon, host).catch(() => undefined);
    if (r?.status === 200 && r.body.includes(`"release":"${release}"`)) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const seconds = (performance.now() - started) / 1000;
  await push;
  const result = await waitForDeploymentOf(daemon, appId, commit);
  if (result.state !== 'OK') throw new Error(`deployment ${result.id} ended ${result.state}`);
  return {
    seconds,
    log: [
      ...(await timedLog(daemon, appId, result.id, pushedAt)),
      `+${seconds.toFixed(2)} s  (the first 200 of the new release through the router)`,
    ],
  };
}

/** The deployment's log lines, each prefixed with its time since `since` (from the log's own timestamps). */
async function timedLog(
  daemon: Awaited<ReturnType<typeof startDaemon>>,
  appId: string,
  deploymentId: string,
  since: number,
): Promise<string[]> {
  const out = await daemon.cli(['logs', '--app', appId, '--deployment-id', deploymentId, '--format', 'json']);
  const lines: string[] = [];
  for (const text of out.stdout.split('\n')) {
    if (!text.trim()) continue;
    const entry = JSON.parse(text) as { time?: string; line?: string };
    if (entry.line === undefined) continue;
    const at = entry.time ? `+${((Date.parse(entry.time) - since) / 1000).toFixed(2)} s` : '';
    lines.push(`${at.padEnd(9)} ${entry.line}`);
  }
  return lines;
}

function wrk(url: string, host: string, seconds: number): Promise<WrkResult> {
  const [file, ...args] = wrkArgv(url, seconds, host);
  return new Promise((resolve, reject) => {
    execFile(file!, args, { timeout: (seconds + 15) * 1000 }, (error, stdout) => (error ? reject(error) : resolve(parseWrk(stdout))));
  });
}

async function timedDeploy(example: string, name: string, daemon: Awaited<ReturnType<typeof startDaemon>>, gitEnv: NodeJS.ProcessEnv) {
  const dir = checkoutExample(example);
  newRelease(dir, name);
  const appId = await createApp(daemon, dir, name, { NODE_ENV: 'production' });
  const started = performance.now();
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  if (result.state !== 'OK') throw new Error(`deployment ${result.id} ended ${result.state}`);
  const host = `${appId}.localhost`;
  for (;;) {
    if ((await getThroughRouter(daemon, host)).status === 200) break;
  }
  return { seconds: (performance.now() - started) / 1000, appId, host, dir };
}

export async function benchPushToLive(options: { wrkSeconds?: number } = {}): Promise<PushToLiveResult> {
  const coldCache = mkdtempSync(join(tmpdir(), 'slipway-bench-toolchains-'));
  const daemon = await startDaemon(['--toolchain-cache', coldCache]);
  try {
    const { gitEnv } = await registerSshKey(daemon);
    const cold = await timedDeploy('node-hello', 'cold', daemon, gitEnv);
    const warm = await timedDeploy('node-hello', 'warm', daemon, gitEnv);
    const status = JSON.parse((await daemon.cli(['status', '--app', warm.appId, '--format', 'json'])).stdout);
    const seconds = options.wrkSeconds ?? Number(process.env.SLIPWAY_BENCH_SECONDS ?? 3);
    const direct = await wrk(`http://${status.instance.address}:${status.instance.port}/`, warm.host, seconds);
    const routed = await wrk(`http://127.0.0.1:${daemon.routerPort}/`, warm.host, seconds);
    // Both ways of redeploying take turns on the same app, so the machine's other load falls on both alike.
    const rounds = Number(process.env.SLIPWAY_BENCH_ROUNDS ?? 5);
    const cliEnv = {
      ...gitEnv,
      XDG_CONFIG_HOME: join(daemon.dataDir, 'client-config'),
      SLIPWAY_URL: daemon.apiUrl,
      SLIPWAY_TOKEN: daemon.adminToken,
    };
    const redeploys: Awaited<ReturnType<typeof timedRedeploy>>[] = [];
    const cliRedeploys: CliRedeploy[] = [];
    const starts: number[] = [];
    const floors: number[] = [];
    for (let round = 1; round <= rounds; round++) {
      redeploys.push(await timedRedeploy(warm.dir, warm.appId, warm.host, daemon, gitEnv, `redeploy-${round}`));
      cliRedeploys.push(await timedCliRedeploy(warm.dir, warm.host, `cli-${round}`, daemon, cliEnv));
      starts.push((await timedCli(['--version'], warm.dir, cliEnv)).seconds);
      floors.push(await floorSeconds());
    }
    const middle = redeploys.map((r) => r.seconds).indexOf(median(redeploys.map((r) => r.seconds)));
    return {
      redeploySeconds: median(redeploys.map((r) => r.seconds)),
      redeployRounds: redeploys.map((r) => r.seconds),
      redeployLog: (redeploys[middle] ?? redeploys[0]!).log,
      cliRedeploySeconds: median(cliRedeploys.map((r) => r.seconds)),
      cliRedeployRounds: cliRedeploys,
      cliStartSeconds: median(starts),
      floorSeconds: median(floors),
      coldSeconds: cold.seconds,
      warmSeconds: warm.seconds,
      warmOverCold: warm.seconds / cold.seconds,
      direct,
      routed,
      routerRatio: routed.requestsPerSecond / direct.requestsPerSecond,
    };
  } finally {
    await daemon.stop();
  }
}

/** The warm redeploy's figures, both ways, beside the floor. */
export function describeRedeploys(r: PushToLiveResult): string {
  const seconds = (values: number[]) => values.map((v) => v.toFixed(2)).join(', ');
  const part = (pick: (c: CliRedeploy) => number) => median(r.cliRedeployRounds.map(pick)).toFixed(2);
  return (
    `warm redeploy over ${r.redeployRounds.length} rounds (medians):\n` +
    `  git push to the first 200 of the new release: ${r.redeploySeconds.toFixed(2)} s (target <= 1.0 s; rounds ${seconds(r.redeployRounds)})\n` +
    `  slipway deploy, start to return: ${r.cliRedeploySeconds.toFixed(2)} s (target <= 1.2 s; rounds ${seconds(r.cliRedeployRounds.map((c) => c.seconds))}):` +
    ` before the push ${part((c) => c.beforePush)} s, push ${part((c) => c.push)} s, deployment after the push ${part((c) => c.afterPush)} s\n` +
    `  slipway --version, start to exit: ${r.cliStartSeconds.toFixed(2)} s\n` +
    `  floor, npm install + start + one request by hand: ${r.floorSeconds.toFixed(2)} s (slipway deploy / floor ${(r.cliRedeploySeconds / r.floorSeconds).toFixed(2)})`
  );
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const r = await benchPushToLive();
  console.log(`push-to-live, cold toolchain cache: ${r.coldSeconds.toFixed(1)} s`);
  console.log(`push-to-live, warm toolchain cache: ${r.warmSeconds.toFixed(1)} s  (warm/cold ${r.warmOverCold.toFixed(2)})`);
  console.log(
    `instance direct: ${r.direct.requestsPerSecond.toFixed(0)} req/s, p50 ${r.direct.p50Ms.toFixed(2)} ms, p99 ${r.direct.p99Ms.toFixed(2)} ms`,
  );
  console.log(
    `through router:  ${r.routed.requestsPerSecond.toFixed(0)} req/s, p50 ${r.routed.p50Ms.toFixed(2)} ms, p99 ${r.routed.p99Ms.toFixed(2)} ms  (router/direct ${r.routerRatio.toFixed(2)})`,
  );
  console.log(describeRedeploys(r));
  console.log(`the median push redeploy's log:\n  ${r.redeployLog.filter((line) => line.trim()).join('\n  ')}`);
  const { redeployLog: _log, ...figures } = r;
  console.log(JSON.stringify(figures));
}
