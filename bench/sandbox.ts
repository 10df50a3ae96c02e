/**
 * What the sandbox costs, measured in one run on this machine:
 *  - instance start to the first HTTP 200 of a Node hello-world: a bare `node` process on a
 *    loopback port vs the same app through the local instance backend (network namespace, runc
 *    sandbox, cgroup), listening on 0.0.0.0:8080 in its namespace;
 *  - hello-world push-to-live through a real daemon (a warm second push), beside the bare start,
 *    and a rollback to the previous release (no build);
 *  - the memory an idle sandboxed instance holds on the host beyond the app's own process.
 * It creates only test-only names (bridge slwbench0, 10.79.0.0/16, namespaces slwb-*, cgroup
 * root slwbench, state under /run/slipway-bench, an app user made as the daemon makes one; the
 * daemon on 10.80.0.0/16) and removes them.
 *
 *   node --import tsx bench/sandbox.ts
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync, chmodSync, rmSync, rmdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import http from 'node:http';
import { LocalNetnsBackend } from '../src/instances/local/local-netns-backend.js';
import { SandboxHost } from '../src/sandbox/sandbox-host.js';
import type { Sandbox } from '../src/sandbox/sandbox-host.js';
import type { Instance } from '../src/instances/backend.js';
import { makeAppUser } from '../test/support/app-user.js';
import { startDaemon } from '../test/support/daemon.js';
import { checkoutExample, createApp, getThroughRouter, newRelease, pushAndWait, registerSshKey } from '../test/support/deploy.js';
import { freePort } from '../test/support/free-port.js';

const APP = `require('http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT || 8080), '0.0.0.0');`;
const NODE = '/usr/bin/node';
const RUNS = Number(process.env.SLIPWAY_BENCH_RUNS ?? 10);
const TARGET_ADDED_MS = 150;
const ROLLBACK_TARGET_S = 2;

const BENCH_NAMES = {
  bridge: 'slwbench0',
  subnet: '10.79.0.0/16',
  prefix: 'slwb',
  cgroupRoot: 'slwbench',
  stateDir: '/run/slipway-bench',
};
/** The daemon's own subnet; its bridge, nft table and cgroup root are named after it (slipway80). */
const DAEMON_SUBNET = '10.80.0.0/16';
const DAEMON_CGROUP_ROOT = 'slipway80';
const CGROUP_MOUNT = '/sys/fs/cgroup';

interface Quantiles {
  median: number;
  p90: number;
}

export interface SandboxBenchResult {
  runs: number;
  bareStartMs: Quantiles;
  sandboxStartMs: Quantiles;
  /** sandboxed median - bare median. */
  addedMs: number;
  addedP90Ms: number;
  targetAddedMs: number;
  /** RSS of the bare process, idle: today's figure, nothing else runs beside it. */
  bareAppRssKiB: number;
  appRssKiB: number;
  extraRssKiB: number;
  /** The anonymous part of extraRssKiB: what each further instance costs for sure. */
  extraAnonKiB: number;
  extraProcesses: string[];
  cgroupMemoryKiB: number;
  cgroupRssKiB: number;
  warmPushSeconds: number;
  rollbackSeconds: number;
}

function quantiles(values: number[]): Quantiles {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)]!, p90: sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.9) - 1)]! };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function firstOk(address: string, port: number, deadlineMs = 20_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const req = http.get({ host: address, port, path: '/', agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on('error', () => resolve(false));
      req.setTimeout(500, () => req.destroy());
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`No HTTP 200 from ${address}:${port} within ${deadlineMs} ms; the hello-world did not start.`);
    await sleep(2);
  }
}

export function statusKiB(pid: number, field: 'VmRSS' | 'RssAnon'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0);
}
export const rssKiB = (pid: number) => statusKiB(pid, 'VmRSS');
/** Anonymous resident memory: private to the process, unlike its binary's pages. */
export const anonKiB = (pid: number) => statusKiB(pid, 'RssAnon');

export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  // A Go program (runc) forks from any of its threads: look at the children of every task.
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) {
      out.push(Number(child), ...childrenOf(Number(child)));
    }
  }
  return out;
}

export function comm(pid: number): string {
  return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
}

/** Resident anonymous memory of a sandbox's cgroup (v1 total_rss, v2 anon), without page cache. */
function cgroupRssKiB(root: string, sandboxId: string): number {
  const v2 = !existsSync(join(CGROUP_MOUNT, 'memory'));
  const file = v2 ? join(CGROUP_MOUNT, root, sandboxId, 'memory.stat') : join(CGROUP_MOUNT, 'memory', root, sandboxId, 'memory.stat');
  const key = v2 ? 'anon' : 'total_rss';
  const line = readFileSync(file, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${key} `));
  return Math.round(Number(line?.split(' ')[1] ?? 0) / 1024);
}

/** Removes a (by now empty) cgroup root of ours from every hierarchy. */
export function removeCgroupRoot(root: string): void {
  const dirs = existsSync(join(CGROUP_MOUNT, 'cgroup.controllers'))
    ? [join(CGROUP_MOUNT, root)]
    : readdirSync(CGROUP_MOUNT, { withFileTypes: true })
        .filter((e) => e.isDirectory() && !e.isSymbolicLink())
        .map((e) => join(CGROUP_MOUNT, e.name, root));
  for (const dir of dirs) {
    try {
      rmdirSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        console.error(`bench: could not remove cgroup ${dir}: ${(error as Error).message}`);
    }
  }
}

async function benchBare(release: string): Promise<{ times: number[]; idleRssKiB: number }> {
  const times: number[] = [];
  let idleRssKiB = 0;
  for (let i = 0; i <= RUNS; i++) {
    const port = await freePort();
    const started = performance.now();
    const child = spawn(NODE, ['server.js'], { cwd: release, env: { PATH: '/usr/bin:/bin', PORT: String(port) }, stdio: 'ignore' });
    const exited = new Promise((r) => child.once('exit', r));
    try {
      await firstOk('127.0.0.1', port);
      // Run 0 warms the page cache and is not counted, on both sides.
      if (i > 0) times.push(performance.now() - started);
      if (i === RUNS) {
        await sleep(1000);
        idleRssKiB = rssKiB(child.pid!);
      }
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  }
  return { times, idleRssKiB };
}

async function benchSandboxed(release: string) {
  const appUser = await makeAppUser('bench-sandbox');
  const user = appUser.user;
  const sandboxes = new SandboxHost({
    bundlesDir: join(BENCH_NAMES.stateDir, 'bundles'),
    stateDir: join(BENCH_NAMES.stateDir, 'runc'),
    cgroupRoot: BENCH_NAMES.cgroupRoot,
  });
  const backend = new LocalNetnsBackend({
    bridgeName: BENCH_NAMES.bridge,
    subnet: BENCH_NAMES.subnet,
    namespacePrefix: BENCH_NAMES.prefix,
    sandboxes,
  });
  const times: number[] = [];
  let memory = { appRssKiB: 0, extraRssKiB: 0, extraAnonKiB: 0, extraProcesses: [] as string[], cgroupMemoryKiB: 0, cgroupRssKiB: 0 };
  try {
    await sandboxes.sweep();
    await backend.init();
    for (let i = 0; i <= RUNS; i++) {
      const started = performance.now();
      const instance: Instance = await backend.start({
        appId: 'bench',
        deploymentId: 'bench',
        instanceId: `bench-instance-${i}`,
        instanceNumber: 0,
        releaseDir: release,
        beforeStart: [],
        command: [NODE, 'server.js'],
        env: { PATH: '/usr/bin:/bin', HOME: release, PORT: '8080' },
        sandbox: { user, limits: { memoryBytes: 512 * 1024 * 1024, pids: 512, cpuShares: 512 }, flavor: 'nano', readOnlyPaths: [] },
        onLog: () => undefined,
      });
      try {
        await firstOk(instance.address, instance.port);
        if (i > 0) times.push(performance.now() - started);
        if (i === RUNS) {
          await sleep(1000); // idle
          // The backend keeps its sandbox private; a benchmark may look.
          const sandbox = (instance as unknown as { group?: Sandbox }).group;
          if (!sandbox)
            throw new Error(
              "The local instance no longer exposes its sandbox as `group`; update bench/sandbox.ts to find the sandbox's parent.",
            );
          const tree = [sandbox.pid, ...childrenOf(sandbox.pid)];
          const app = tree.find((p) => comm(p) === 'node');
          if (app === undefined)
            throw new Error(`No node process under the sandbox's parent (pid ${sandbox.pid}): saw ${tree.map(comm).join(', ')}.`);
          const extras = tree.filter((p) => p !== app);
          memory = {
            appRssKiB: rssKiB(app),
            extraRssKiB: extras.reduce((sum, p) => sum + rssKiB(p), 0),
            extraAnonKiB: extras.reduce((sum, p) => sum + anonKiB(p), 0),
            extraProcesses: extras.map((p) => `${comm(p)} ${rssKiB(p)} KiB, ${anonKiB(p)} anonymous`),
            cgroupMemoryKiB: Math.round((instance.memoryUsage() ?? 0) / 1024),
            cgroupRssKiB: cgroupRssKiB(BENCH_NAMES.cgroupRoot, sandbox.id),
          };
        }
      } finally {
        await instance.stop(1000);
      }
    }
  } finally {
    await backend.stopAll(1000).catch((e) => console.error(`bench: stopping instances: ${(e as Error).message}`));
    await backend.removeBridge().catch((e) => console.error(`bench: removing bridge ${BENCH_NAMES.bridge}: ${(e as Error).message}`));
    removeCgroupRoot(BENCH_NAMES.cgroupRoot);
    rmSync(BENCH_NAMES.stateDir, { recursive: true, force: true });
    await appUser.remove().catch((e) => console.error(`bench: removing the app user: ${(e as Error).message}`));
  }
  return { times, memory };
}

async function benchDaemon(): Promise<{ warmPushSeconds: number; rollbackSeconds: number }> {
  // startDaemon passes a random --subnet first; ours comes last and wins, so the names are known.
  const daemon = await startDaemon(['--subnet', DAEMON_SUBNET]);
  // The test support removes the daemon's app users at exit, reading them from its data folder;
  // this handler, registered after that one, then removes the folder.
  process.once('exit', () => rmSync(daemon.dataDir, { recursive: true, force: true }));
  const temporary: string[] = [];
  try {
    const { gitEnv, keyPath } = await registerSshKey(daemon);
    temporary.push(dirname(keyPath));
    const dir = checkoutExample('node-hello');
    temporary.push(dir);
    const appId = await createApp(daemon, dir, 'bench-sandbox');
    const host = `${appId}.localhost`;
    const releaseServed = async (name: string) => {
      for (;;) {
        const r = await getThroughRouter(daemon, host);
        if (r.status === 200 && (JSON.parse(r.body) as { release?: string }).release === name) return;
        await sleep(5);
      }
    };
    newRelease(dir, 'one');
    const first = await pushAndWait(daemon, dir, appId, gitEnv);
    if (first.state !== 'OK') throw new Error(`The first deployment ${first.id} ended ${first.state}; see its log with slipway logs.`);
    await releaseServed('one');

    newRelease(dir, 'two');
    const pushStarted = performance.now();
    const second = await pushAndWait(daemon, dir, appId, gitEnv);
    if (second.state !== 'OK') throw new Error(`The second deployment ${second.id} ended ${second.state}; see its log with slipway logs.`);
    await releaseServed('two');
    const warmPushSeconds = (performance.now() - pushStarted) / 1000;

    const rollbackStarted = performance.now();
    const result = await daemon.cli(['rollback', '--app', appId]);
    if (result.code !== 0) throw new Error(`slipway rollback failed: ${result.stderr}`);
    await releaseServed('one');
    const rollbackSeconds = (performance.now() - rollbackStarted) / 1000;
    return { warmPushSeconds, rollbackSeconds };
  } finally {
    await daemon.stop();
    removeCgroupRoot(DAEMON_CGROUP_ROOT);
    for (const path of temporary) rmSync(path, { recursive: true, force: true });
  }
}

export async function benchSandbox(): Promise<SandboxBenchResult> {
  if (process.getuid?.() !== 0) throw new Error('bench/sandbox.ts needs root (network namespaces, runc, cgroups): run it as root.');
  const release = mkdtempSync(join(tmpdir(), 'slipway-bench-sandbox-'));
  try {
    chmodSync(release, 0o755);
    writeFileSync(join(release, 'server.js'), APP);
    chmodSync(join(release, 'server.js'), 0o644);
    const bare = await benchBare(release);
    const sandboxed = await benchSandboxed(release);
    const daemon = await benchDaemon();
    const bareQ = quantiles(bare.times);
    const sandboxQ = quantiles(sandboxed.times);
    return {
      runs: RUNS,
      bareStartMs: bareQ,
      sandboxStartMs: sandboxQ,
      addedMs: sandboxQ.median - bareQ.median,
      addedP90Ms: sandboxQ.p90 - bareQ.p90,
      targetAddedMs: TARGET_ADDED_MS,
      bareAppRssKiB: bare.idleRssKiB,
      ...sandboxed.memory,
      ...daemon,
    };
  } finally {
    rmSync(release, { recursive: true, force: true });
  }
}

export function describeSandbox(r: SandboxBenchResult): string {
  const ms = (n: number) => `${n.toFixed(0)} ms`;
  return [
    `instance start to first 200 (${r.runs} runs each): bare process median ${ms(r.bareStartMs.median)} (p90 ${ms(r.bareStartMs.p90)}), ` +
      `sandboxed (netns + runc + cgroup) median ${ms(r.sandboxStartMs.median)} (p90 ${ms(r.sandboxStartMs.p90)})`,
    `  added per start: median +${ms(r.addedMs)}, p90 +${ms(r.addedP90Ms)} (target at most ${r.targetAddedMs} ms: ${r.addedMs <= r.targetAddedMs ? 'met' : 'NOT met'}); ` +
      `sandboxed/bare ${(r.sandboxStartMs.median / r.bareStartMs.median).toFixed(2)}`,
    `hello world push-to-live (warm, second push) ${r.warmPushSeconds.toFixed(2)} s, against a bare process start of ${ms(r.bareStartMs.median)}; ` +
      `rollback to the previous release (no build) ${r.rollbackSeconds.toFixed(2)} s (target under ${ROLLBACK_TARGET_S} s: ${r.rollbackSeconds < ROLLBACK_TARGET_S ? 'met' : 'NOT met'})`,
    `idle instance memory: app ${r.appRssKiB} KiB RSS (bare: ${r.bareAppRssKiB} KiB); the sandbox adds ${r.extraRssKiB} KiB RSS on the host (${r.extraProcesses.join('; ')}), ` +
      `${r.extraAnonKiB} KiB of it anonymous, the rest the binaries' pages that every instance's conmon and tini share; ` +
      `its cgroup holds ${r.cgroupMemoryKiB} KiB (${r.cgroupRssKiB} KiB of it resident, the rest page cache)`,
    `  before the sandbox (setpriv + ip netns exec, each exec'ing into the next) nothing stayed beside the app: 0 KiB added`,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const r = await benchSandbox();
  console.log(describeSandbox(r));
  console.log(JSON.stringify(r));
}
