/**
 * What the sandbox costs: instance start time (a bare `node` process vs the same app through
 * the local instance backend: network namespace + runc sandbox + cgroup), the memory an idle
 * sandboxed instance holds beyond the app's own process, and the time of a rollback (start,
 * health check and switch of a kept release, no build) through a real daemon.
 *
 *   node --import tsx bench/sandbox.ts
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync, chmodSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import http from 'node:http';
import { LocalNetnsBackend } from '../src/instances/local/local-netns-backend.js';
import { SandboxHost } from '../src/sandbox/sandbox-host.js';
import { ensureAppUser } from '../src/executor/app-user.js';
import { startDaemon } from '../test/support/daemon.js';
import { checkoutExample, createApp, getThroughRouter, newRelease, pushAndWait, registerSshKey } from '../test/support/deploy.js';
import { freePort } from '../test/support/free-port.js';

const APP = `require('http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT || 8080), '0.0.0.0');`;
const RUNS = Number(process.env.SLIPWAY_BENCH_RUNS ?? 7);
const TARGET_ADDED_MS = 150;

export interface SandboxBenchResult {
  bareStartMs: { median: number; p90: number };
  sandboxStartMs: { median: number; p90: number };
  addedMs: number;
  appRssKiB: number;
  extraRssKiB: number;
  extraProcesses: string[];
  cgroupMemoryKiB: number;
  rollbackSeconds: number;
  warmPushSeconds: number;
}

function quantiles(values: number[]): { median: number; p90: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)]!, p90: sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.9) - 1)]! };
}

async function firstOk(address: string, port: number, deadlineMs = 20_000): Promise<void> {
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
    if (Date.now() > until) throw new Error(`no answer from ${address}:${port}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0);
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  // A Go program (runc) forks from any of its threads: look at the children of every task.
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) {
      out.push(Number(child), ...childrenOf(Number(child)));
    }
  }
  return out;
}

function comm(pid: number): string {
  return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
}

export async function benchSandbox(): Promise<SandboxBenchResult> {
  const release = mkdtempSync(join(tmpdir(), 'slipway-bench-sandbox-'));
  chmodSync(release, 0o755);
  writeFileSync(join(release, 'server.js'), APP);
  chmodSync(join(release, 'server.js'), 0o644);

  const bare: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const port = await freePort();
    const started = performance.now();
    const child = spawn('/usr/bin/node', ['server.js'], { cwd: release, env: { PATH: '/usr/bin:/bin', PORT: String(port) }, stdio: 'ignore' });
    await firstOk('127.0.0.1', port);
    bare.push(performance.now() - started);
    child.kill('SIGKILL');
  }

  const user = await ensureAppUser('slipway-bench-app');
  const sandboxes = new SandboxHost({ bundlesDir: '/run/slipway-bench/bundles', stateDir: '/run/slipway-bench/runc', cgroupRoot: 'slwbench' });
  await sandboxes.sweep();
  const backend = new LocalNetnsBackend({ bridgeName: 'slwbench0', subnet: '10.79.0.0/16', namespacePrefix: 'slwb', sandboxes });
  await backend.init();
  const sandboxed: number[] = [];
  let memory = { appRssKiB: 0, extraRssKiB: 0, extraProcesses: [] as string[], cgroupMemoryKiB: 0 };
  try {
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      const instance = await backend.start({
        appId: 'bench',
        deploymentId: 'bench',
        instanceId: `bench-instance-${i}`,
        instanceNumber: 0,
        releaseDir: release,
        beforeStart: [],
        command: ['/usr/bin/node', 'server.js'],
        env: { PATH: '/usr/bin:/bin', HOME: release, PORT: '8080' },
        sandbox: { user, limits: { memoryBytes: 512 * 1024 * 1024, pids: 512, cpuShares: 512 }, flavor: 'nano', readOnlyPaths: [] },
        onLog: () => undefined,
      });
      await firstOk(instance.address, instance.port);
      sandboxed.push(performance.now() - started);
      if (i === RUNS - 1) {
        await new Promise((r) => setTimeout(r, 1000)); // idle
        const runc = (instance as unknown as { group?: { pid: number } }).group?.pid;
        if (!runc) throw new Error('no sandbox process to measure');
        const tree = [runc, ...childrenOf(runc)];
        const app = tree.find((p) => comm(p) === 'node')!;
        const extras = tree.filter((p) => p !== app);
        memory = {
          appRssKiB: rssKiB(app),
          extraRssKiB: extras.reduce((sum, p) => sum + rssKiB(p), 0),
          extraProcesses: extras.map((p) => `${comm(p)} ${rssKiB(p)} KiB`),
          cgroupMemoryKiB: Math.round((instance.memoryUsage() ?? 0) / 1024),
        };
      }
      await instance.stop(1000);
    }
  } finally {
    await backend.stopAll(1000);
    await backend.removeBridge();
    rmSync(release, { recursive: true, force: true });
  }

  const daemon = await startDaemon();
  let rollbackSeconds = 0;
  let warmPushSeconds = 0;
  try {
    const { gitEnv } = await registerSshKey(daemon);
    const dir = checkoutExample('node-hello');
    const appId = await createApp(daemon, dir, 'bench-rollback');
    const host = `${appId}.localhost`;
    newRelease(dir, 'one');
    await pushAndWait(daemon, dir, appId, gitEnv);
    newRelease(dir, 'two');
    const pushStarted = performance.now();
    await pushAndWait(daemon, dir, appId, gitEnv);
    while (JSON.parse((await getThroughRouter(daemon, host)).body).release !== 'two');
    warmPushSeconds = (performance.now() - pushStarted) / 1000;
    const started = performance.now();
    const result = await daemon.cli(['rollback', '--app', appId]);
    if (result.code !== 0) throw new Error(result.stderr);
    while (JSON.parse((await getThroughRouter(daemon, host)).body).release !== 'one');
    rollbackSeconds = (performance.now() - started) / 1000;
  } finally {
    await daemon.stop();
  }

  const bareQ = quantiles(bare);
  const sandboxQ = quantiles(sandboxed);
  return { bareStartMs: bareQ, sandboxStartMs: sandboxQ, addedMs: sandboxQ.median - bareQ.median, ...memory, rollbackSeconds, warmPushSeconds };
}

export function describeSandbox(r: SandboxBenchResult): string {
  return [
    `instance start to first 200: bare process median ${r.bareStartMs.median.toFixed(0)} ms (p90 ${r.bareStartMs.p90.toFixed(0)}), sandboxed median ${r.sandboxStartMs.median.toFixed(0)} ms (p90 ${r.sandboxStartMs.p90.toFixed(0)}): ` +
      `+${r.addedMs.toFixed(0)} ms per start (target at most ${TARGET_ADDED_MS} ms: ${r.addedMs <= TARGET_ADDED_MS ? 'met' : 'NOT met'}); sandboxed/bare ${(r.sandboxStartMs.median / r.bareStartMs.median).toFixed(2)}`,
    `idle instance memory: app ${r.appRssKiB} KiB RSS; beside it on the host ${r.extraRssKiB} KiB (${r.extraProcesses.join(', ')}); its cgroup holds ${r.cgroupMemoryKiB} KiB`,
    `hello world: warm push-to-live ${r.warmPushSeconds.toFixed(2)} s; rollback to the previous release (no build) ${r.rollbackSeconds.toFixed(2)} s (target under 2 s: ${r.rollbackSeconds < 2 ? 'met' : 'NOT met'})`,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const r = await benchSandbox();
  console.log(describeSandbox(r));
  console.log(JSON.stringify(r));
}
