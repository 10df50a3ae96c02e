/**
 * Router throughput: a Node hello-world upstream on loopback, measured with wrk directly,
 * through the HaproxyRouter (the default engine) and through the NginxRouter configured as
 * the earlier engine was (1 thread, 32 connections, a few seconds each). Both report every
 * request to the bench as they report it to the daemon (HAProxy through the pipe of its fd 3, nginx from its
 * buffered access log), so each pays for its access log as it does in the product.
 *
 *   node --import tsx bench/router.ts        # table + one JSON line
 *   SLIPWAY_BENCH_SECONDS=5 SLIPWAY_BENCH_ROUNDS=5 node --import tsx bench/router.ts
 *
 * Direct, HAProxy and nginx runs alternate (default 3 rounds of 3 s each) and medians are reported.
 *
 * GUIDE.md's reference: nginx with upstream keep-alive reaches 0.53-0.59 of direct.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { NginxRouter } from './nginx/nginx-router.js';
import { HaproxyRouter } from '../src/router/haproxy/haproxy-router.js';

export interface WrkResult {
  /** Responses wrk counted in the run. */
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export interface RouterBenchResult {
  /** Median over the rounds, by requests per second. */
  direct: WrkResult;
  /** Through the HAProxy engine (the default), its access records consumed as the daemon does. */
  routed: WrkResult;
  /** Through nginx configured as the earlier engine was (its access log read as the daemon read it). */
  nginx: WrkResult;
  /** HAProxy / direct requests per second (of the medians): the target is at least 0.55. */
  ratio: number;
  /** HAProxy / nginx requests per second: the target is at least 1 (not below nginx). */
  overNginx: number;
  /** Each round's HAProxy/direct ratio: their spread shows how noisy the machine was. */
  roundRatios: number[];
  /**
   * µs of CPU per request of each proxy's processes (from /proc, over all its measured runs):
   * on this shared 2-core machine the steadiest comparison, since other work moves requests per
   * second far more than it moves CPU per request.
   */
  cpuPerRequestUs: { haproxy: number; nginx: number };
  /**
   * µs of this process's CPU per request while each proxy was measured: receiving and parsing
   * the access records, which the daemon pays in the product (wrk and the upstream are other processes).
   */
  receiverCpuPerRequestUs: { haproxy: number; nginx: number };
  /** µs of the upstream app's CPU per request on each path: what the proxy's way of talking to it costs the app. */
  upstreamCpuPerRequestUs: { direct: number; haproxy: number; nginx: number };
  /** Share of the machine's CPU time left idle during each path's runs (%): waiting, not working. */
  idlePercent: { direct: number; haproxy: number; nginx: number };
}

/** Idle and total clock ticks of the whole machine, from the first line of /proc/stat. */
async function machineTicks(): Promise<{ idle: number; total: number }> {
  const fields = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return { idle: fields[3]! + fields[4]!, total: fields.reduce((sum, n) => sum + n, 0) };
}

/** Parent pid and user + system clock ticks of the process `/proc/<pid>/stat` describes. */
async function processStat(pid: number | string): Promise<{ ppid: number; ticks: number }> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command name, which may itself hold spaces and parentheses.
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
}

/** User + system clock ticks of the processes whose command line names `folder`, and of their children. */
async function cpuTicksOfProcessesIn(folder: string): Promise<number> {
  const stats = new Map<number, { ppid: number; ticks: number }>();
  const owners = new Set<number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      stats.set(Number(entry), await processStat(entry));
      if ((await readFile(`/proc/${entry}/cmdline`, 'utf8')).includes(folder)) owners.add(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  let ticks = 0;
  for (const [pid, stat] of stats) if (owners.has(pid) || owners.has(stat.ppid)) ticks += stat.ticks;
  return ticks;
}

/** Clock ticks per second of /proc's counters (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

const HOST = 'bench.test';
const HELLO_WORLD = `
const http = require("node:http");
const server = http.createServer((req, res) => { res.writeHead(200, { "content-type": "text/plain" }); res.end("hello world\\n"); });
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"));
`;

/** wrk's argv for one bounded run. */
export function wrkArgv(url: string, seconds: number, host: string): string[] {
  return ['wrk', '-t1', '-c32', `-d${seconds}s`, '--timeout', '5s', '--latency', '-H', `Host: ${host}`, url];
}

function toMs(value: string, unit: string): number {
  const factor = unit === 'us' ? 0.001 : unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : NaN;
  return Number(value) * factor;
}

/** Reads requests/s and the 50th/99th latency percentiles from wrk's --latency output. */
export function parseWrk(output: string): WrkResult {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(output);
  const requests = /(\d+) requests in/.exec(output);
  const p50 = /^\s*50%\s+([\d.]+)(us|ms|s|m)\b/m.exec(output);
  const p99 = /^\s*99%\s+([\d.]+)(us|ms|s|m)\b/m.exec(output);
  if (!rps || !requests || !p50 || !p99)
    throw new Error(`Could not read wrk's output (expected "Requests/sec" and a latency distribution):\n${output}`);
  const failures = /Non-2xx or 3xx responses:\s+(\d+)/.exec(output);
  if (failures)
    throw new Error(`wrk saw ${failures[1]} non-2xx responses: the route is broken, the figures would be meaningless.\n${output}`);
  const errors = /Socket errors: (.*)/.exec(output);
  if (errors) process.stderr.write(`wrk reported socket errors: ${errors[1]}\n`);
  return { requests: Number(requests[1]), requestsPerSecond: Number(rps[1]), p50Ms: toMs(p50[1]!, p50[2]!), p99Ms: toMs(p99[1]!, p99[2]!) };
}

function runWrk(url: string, seconds: number): Promise<WrkResult> {
  const [file, ...args] = wrkArgv(url, seconds, HOST);
  return new Promise((resolve, reject) => {
    execFile(file!, args, { timeout: (seconds + 15) * 1000 }, (error, stdout, stderr) => {
      if (error) {
        const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
        reject(
          new Error(
            missing
              ? 'wrk is not installed: install the Debian package wrk (apt-get install -y wrk).'
              : `wrk failed: ${error.message}\n${stderr}`,
          ),
        );
        return;
      }
      try {
        resolve(parseWrk(stdout));
      } catch (parseError) {
        reject(parseError);
      }
    });
  });
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((ok) => probe.listen(0, '127.0.0.1', ok));
  const { port } = probe.address() as AddressInfo;
  await new Promise((ok) => probe.close(ok));
  return port;
}

/** The upstream runs in its own process so the bench's own event loop does not share its core. */
function startUpstream(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['-e', HELLO_WORLD], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`The hello-world upstream exited early (code ${code}).`)));
    child.stdout!.once('data', (data: Buffer) => resolve({ child, port: Number(data.toString().trim()) }));
  });
}

function median(results: WrkResult[]): WrkResult {
  const sorted = [...results].sort((x, y) => x.requestsPerSecond - y.requestsPerSecond);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * Direct and routed runs alternate for a few rounds and the medians are compared, so a
 * burst of other work on the machine skews one round rather than the whole answer.
 */
export async function benchRouter(options: { seconds?: number; rounds?: number } = {}): Promise<RouterBenchResult> {
  const seconds = options.seconds ?? Number(process.env.SLIPWAY_BENCH_SECONDS ?? 3);
  const rounds = options.rounds ?? Number(process.env.SLIPWAY_BENCH_ROUNDS ?? 3);
  const workDir = await mkdtemp(join(tmpdir(), 'slipway-bench-router-'));
  // nginx's workers (www-data) must be able to search their way to its temp folder inside.
  await chmod(workDir, 0o711);
  const upstream = await startUpstream();
  const [nginxPort, haproxyPort] = [await freePort(), await freePort()];
  let records = 0;
  let nginxRecords = 0;
  const nginx = new NginxRouter({
    listenHost: '127.0.0.1',
    port: nginxPort,
    workDir: join(workDir, 'nginx'),
    drainTimeoutSeconds: 5,
    onRequest: () => nginxRecords++,
  });
  const haproxy = new HaproxyRouter({
    listenHost: '127.0.0.1',
    port: haproxyPort,
    workDir: join(workDir, 'haproxy'),
    drainTimeoutSeconds: 5,
    onRequest: () => records++,
  });
  try {
    const table = new Map([[HOST, { appId: 'app_bench', upstreams: [{ address: '127.0.0.1', port: upstream.port }], forceHttps: false }]]);
    for (const router of [nginx, haproxy]) {
      await router.start();
      await router.apply(table);
    }
    const urls = {
      direct: `http://127.0.0.1:${upstream.port}/`,
      routed: `http://127.0.0.1:${haproxyPort}/`,
      nginx: `http://127.0.0.1:${nginxPort}/`,
    };
    // Warm every path (JIT, keep-alive pools) before measuring.
    for (const url of Object.values(urls)) await runWrk(url, 1);
    // The warm-up's records may still be on their way: the count below starts from what arrived.
    await new Promise((ok) => setTimeout(ok, 500));
    const routedRequests = records;
    const runs = { direct: [] as WrkResult[], routed: [] as WrkResult[], nginx: [] as WrkResult[] };
    const folders = { routed: join(workDir, 'haproxy'), nginx: join(workDir, 'nginx') };
    const ticks = { routed: 0, nginx: 0 };
    const receiverMicros = { routed: 0, nginx: 0 };
    const upstreamTicks = { direct: 0, routed: 0, nginx: 0 };
    const machine = { direct: { idle: 0, total: 0 }, routed: { idle: 0, total: 0 }, nginx: { idle: 0, total: 0 } };
    for (let round = 0; round < rounds; round++) {
      for (const path of ['direct', 'routed', 'nginx'] as const) {
        const before = path === 'direct' ? 0 : await cpuTicksOfProcessesIn(folders[path]);
        const ownBefore = process.cpuUsage();
        const upstreamBefore = (await processStat(upstream.child.pid!)).ticks;
        const machineBefore = await machineTicks();
        runs[path].push(await runWrk(urls[path], seconds));
        const machineAfter = await machineTicks();
        machine[path].idle += machineAfter.idle - machineBefore.idle;
        machine[path].total += machineAfter.total - machineBefore.total;
        upstreamTicks[path] += (await processStat(upstream.child.pid!)).ticks - upstreamBefore;
        if (path === 'direct') continue;
        const own = process.cpuUsage(ownBefore);
        receiverMicros[path] += own.user + own.system;
        ticks[path] += (await cpuTicksOfProcessesIn(folders[path])) - before;
      }
    }
    // Every request served must be reported (item 7's figures count them): wait for the last batch.
    const served = routedRequests + runs.routed.reduce((sum, run) => sum + run.requests, 0);
    for (let i = 0; i < 30 && records < served; i++) await new Promise((ok) => setTimeout(ok, 100));
    if (records < served)
      throw new Error(`HAProxy served ${served} measured requests but reported only ${records} access records: records were lost.`);
    // nginx flushes its buffered access log every second.
    for (let i = 0; i < 30 && nginxRecords === 0; i++) await new Promise((ok) => setTimeout(ok, 100));
    if (nginxRecords === 0) throw new Error('nginx reported no access record: it is not configured as the daemon configured it.');
    const direct = median(runs.direct);
    const routed = median(runs.routed);
    const viaNginx = median(runs.nginx);
    const ratioOf = (r: WrkResult, d: WrkResult) => Number((r.requestsPerSecond / d.requestsPerSecond).toFixed(3));
    return {
      direct,
      routed,
      nginx: viaNginx,
      ratio: ratioOf(routed, direct),
      overNginx: ratioOf(routed, viaNginx),
      roundRatios: runs.routed.map((r, i) => ratioOf(r, runs.direct[i]!)),
      cpuPerRequestUs: {
        haproxy: perRequestUs(ticks.routed, runs.routed),
        nginx: perRequestUs(ticks.nginx, runs.nginx),
      },
      receiverCpuPerRequestUs: {
        haproxy: perRequestUs((receiverMicros.routed / 1e6) * TICKS_PER_SECOND, runs.routed),
        nginx: perRequestUs((receiverMicros.nginx / 1e6) * TICKS_PER_SECOND, runs.nginx),
      },
      upstreamCpuPerRequestUs: {
        direct: perRequestUs(upstreamTicks.direct, runs.direct),
        haproxy: perRequestUs(upstreamTicks.routed, runs.routed),
        nginx: perRequestUs(upstreamTicks.nginx, runs.nginx),
      },
      idlePercent: {
        direct: idleShare(machine.direct),
        haproxy: idleShare(machine.routed),
        nginx: idleShare(machine.nginx),
      },
    };
  } finally {
    await haproxy.stop().catch(() => undefined);
    await nginx.stop().catch(() => undefined);
    upstream.child.removeAllListeners('exit');
    upstream.child.kill('SIGTERM');
    await rm(workDir, { recursive: true, force: true });
  }
}

function perRequestUs(ticks: number, runs: WrkResult[]): number {
  const requests = runs.reduce((sum, run) => sum + run.requests, 0);
  return Number(((ticks / TICKS_PER_SECOND / requests) * 1e6).toFixed(1));
}

function idleShare(ticks: { idle: number; total: number }): number {
  return Number(((100 * ticks.idle) / Math.max(1, ticks.total)).toFixed(1));
}

function row(name: string, result: WrkResult): string {
  return `${name.padEnd(8)} ${result.requestsPerSecond.toFixed(0).padStart(10)} ${result.p50Ms.toFixed(2).padStart(9)} ${result.p99Ms.toFixed(2).padStart(9)}`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await benchRouter();
  console.log(`${'path'.padEnd(8)} ${'req/s'.padStart(10)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)}`);
  console.log(row('direct', result.direct));
  console.log(row('haproxy', result.routed));
  console.log(row('nginx', result.nginx));
  console.log(
    `ratio (haproxy/direct): ${result.ratio} (target >= 0.55; per round: ${result.roundRatios.join(', ')}); haproxy/nginx: ${result.overNginx} (target >= 1)`,
  );
  console.log(
    `proxy CPU per request: haproxy ${result.cpuPerRequestUs.haproxy} µs, nginx ${result.cpuPerRequestUs.nginx} µs (every HAProxy record received); ` +
      `receiving the records: haproxy's ${result.receiverCpuPerRequestUs.haproxy} µs, nginx's ${result.receiverCpuPerRequestUs.nginx} µs`,
  );
  console.log(
    `the app's CPU per request: direct ${result.upstreamCpuPerRequestUs.direct} µs, via haproxy ${result.upstreamCpuPerRequestUs.haproxy} µs, via nginx ${result.upstreamCpuPerRequestUs.nginx} µs; ` +
      `machine idle: direct ${result.idlePercent.direct}%, haproxy ${result.idlePercent.haproxy}%, nginx ${result.idlePercent.nginx}%`,
  );
  console.log(JSON.stringify({ bench: 'router', engine: 'haproxy', ...result }));
}
