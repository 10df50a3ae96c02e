/**
 * Log drains: how fast a drain delivers an app's lines to a local HTTP receiver, and what each
 * line costs the daemon's CPU, against a baseline measured in the same run (the same lines
 * written to the app's log with no drain).
 *
 *   node --import tsx bench/drains.ts      (SLIPWAY_BENCH_DRAIN_LINES lines, default 100000)
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, statSync, openSync, readSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startDaemon, type TestDaemon } from '../test/support/daemon.js';
import { checkoutFixture, createApp, getThroughRouter, pushAndWait, registerSshKey } from '../test/support/deploy.js';
import { waitUntil } from '../test/support/wait.js';

export interface DrainBenchResult {
  lines: number;
  /** Lines per second a drain delivers from its buffer to a local HTTP receiver. */
  deliveredPerSecond: number;
  /** Daemon CPU per line written to the app's log, no drain (µs). */
  baselineCpuMicrosPerLine: number;
  /** Daemon CPU per line written to the log and delivered by one HTTP drain (µs). */
  drainCpuMicrosPerLine: number;
  /** drain / baseline CPU per line. */
  cpuRatio: number;
}

const TICKS_PER_SECOND = 100;

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime, fields 14 and 15 of the line (11 and 12 after the command's name).
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** The last bytes of the app's current log file. */
function logTail(daemon: TestDaemon, appId: string): string {
  const file = join(daemon.dataDir, 'logs', `${appId}.ndjson`);
  const size = statSync(file).size;
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(Math.min(4096, size));
    readSync(fd, buffer, 0, buffer.length, size - buffer.length);
    return buffer.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

export async function benchDrains(): Promise<DrainBenchResult> {
  const lines = Number(process.env.SLIPWAY_BENCH_DRAIN_LINES ?? 100_000);
  const last = String(lines).padStart(6, '0');
  let received = 0;
  const receiver = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) received++;
    });
    req.on('end', () => res.end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const daemon = await startDaemon();
  try {
    const { gitEnv } = await registerSshKey(daemon);
    const dir = checkoutFixture('drain-lines');
    const appId = await createApp(daemon, dir, 'drain-bench');
    const deployed = await pushAndWait(daemon, dir, appId, gitEnv);
    if (deployed.state !== 'OK') throw new Error(`the bench app did not deploy: ${deployed.state}`);
    const print = async (tag: string) => {
      const answer = await getThroughRouter(daemon, `${appId}.localhost`, `/print?tag=${tag}&n=${lines}&ms=2000`);
      if (answer.status !== 200) throw new Error(`print answered ${answer.status}`);
    };
    const cli = async (args: string[]) => {
      const result = await daemon.cli(args, { cwd: dir });
      if (result.code !== 0) throw new Error(`slipway ${args.join(' ')}: ${result.stderr}`);
      return result.stdout;
    };
    const settle = () => new Promise((r) => setTimeout(r, 1000));

    // Baseline: the lines into the app's log, no drain.
    await settle();
    let cpu = cpuSeconds(daemon.pid());
    await print('base');
    await waitUntil(
      'the baseline lines in the log',
      async () => (logTail(daemon, appId).includes(`base ${last}`) ? true : undefined),
      120_000,
    );
    const baselineCpu = cpuSeconds(daemon.pid()) - cpu;

    // With a drain, disabled while the lines come so that delivery is timed on its own.
    const id = (await cli(['drain', 'create', 'HTTP', `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`])).trim();
    await cli(['drain', 'disable', id]);
    await settle();
    cpu = cpuSeconds(daemon.pid());
    await print('drain');
    await waitUntil(
      'the drained lines in the log',
      async () => (logTail(daemon, appId).includes(`drain ${last}`) ? true : undefined),
      120_000,
    );
    const waiting = async () => (JSON.parse(await cli(['drain', '--format', 'json'])) as Array<{ waiting: number }>)[0]!.waiting;
    await waitUntil('the lines in the drain buffer', async () => ((await waiting()) >= lines ? true : undefined), 60_000);
    const before = received;
    const started = performance.now();
    await cli(['drain', 'enable', id]);
    await waitUntil('every line delivered', async () => (received - before >= lines ? true : undefined), 300_000);
    const seconds = (performance.now() - started) / 1000;
    const drainCpu = cpuSeconds(daemon.pid()) - cpu;
    const baselineCpuMicrosPerLine = (baselineCpu / lines) * 1e6;
    const drainCpuMicrosPerLine = (drainCpu / lines) * 1e6;
    return {
      lines,
      deliveredPerSecond: lines / seconds,
      baselineCpuMicrosPerLine,
      drainCpuMicrosPerLine,
      cpuRatio: drainCpuMicrosPerLine / Math.max(baselineCpuMicrosPerLine, 1e-9),
    };
  } finally {
    await daemon.stop();
    receiver.close();
  }
}

export function describeDrains(r: DrainBenchResult): string {
  return (
    `log drains: ${r.lines} lines delivered to a local HTTP receiver at ${r.deliveredPerSecond.toFixed(0)} lines/s; ` +
    `daemon CPU ${r.drainCpuMicrosPerLine.toFixed(1)} µs/line with a drain vs ${r.baselineCpuMicrosPerLine.toFixed(1)} µs/line to the log alone (x${r.cpuRatio.toFixed(2)})`
  );
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const result = await benchDrains();
  console.log(describeDrains(result));
  console.log(JSON.stringify(result));
}
