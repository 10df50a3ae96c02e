/**
 * What a single-writer volume costs its clients at a switch: a SQLite app (test/fixtures/
 * sqlite-app) on an exclusive volume, under ~100 requests a second (half POSTs that write a
 * row), restarted three times; the baseline is the same app without a volume (its usual switch,
 * the new instance healthy beside the old), in the same run and under the same load. Printed:
 * failed requests and the added latency of the requests held during the handovers (the longest
 * latency during the restarts less the median of the quiet seconds before), against the new
 * instance's start time (target: added latency <= start time + 1 s).
 *
 *   node --import tsx bench/exclusive-volume.ts
 */
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDaemon, type TestDaemon } from '../test/support/daemon.js';
import { openLoad, type Sample } from './open-load.js';
import { checkoutFixture, createApp, pushAndWait, registerSshKey } from '../test/support/deploy.js';

const RATE_PER_SECOND = 100;
const QUIET_MS = 3000;
const RESTARTS = 3;

export interface SwitchFigures {
  requests: number;
  failed: number;
  quietMedianMs: number;
  worstMs: number;
  addedMs: number;
  /** The new instance's start and health check, as the handover logged it (exclusive volume only). */
  startSeconds: number[];
  /** From the hold to the old instance stopped (its requests finished, SIGTERM, its sandbox gone). */
  stopSeconds: number[];
}

export interface ExclusiveVolumeResult {
  baseline: SwitchFigures;
  exclusive: SwitchFigures;
}

/** Requests at a steady rate whatever the answers (open loop), every other one a POST inserting a row. */
function pacedLoad(daemon: TestDaemon, host: string): { stop(): Promise<Sample[]> } {
  return openLoad(daemon, host, {
    ratePerSecond: RATE_PER_SECOND,
    timeoutMs: 70_000,
    requestAt: (n, sentAt) =>
      n % 2 === 1
        ? { method: 'POST', path: '/', body: JSON.stringify({ order: sentAt }), headers: { 'content-type': 'application/json' } }
        : { method: 'GET', path: '/' },
  });
}

async function measure(daemon: TestDaemon, appId: string): Promise<SwitchFigures> {
  const load = pacedLoad(daemon, `${appId}.localhost`);
  const began = Date.now();
  await sleep(QUIET_MS);
  const startSeconds: number[] = [];
  const stopSeconds: number[] = [];
  for (let i = 0; i < RESTARTS; i++) {
    const restarted = await daemon.cli(['restart', '--app', appId], { timeoutMs: 300_000 });
    if (restarted.code !== 0) throw new Error(`slipway restart failed:\n${restarted.stderr}`);
    const output = `${restarted.stdout}${restarted.stderr}`;
    const logged = /passed its health check in ([\d.]+) s/.exec(output);
    if (logged) startSeconds.push(Number(logged[1]));
    const stopped = /finished its requests \(([\d.]+) s\) and stopped \(([\d.]+) s\)/.exec(output);
    if (stopped) stopSeconds.push(Number(stopped[2]));
    await sleep(1000);
  }
  const samples = await load.stop();
  const quiet = samples
    .filter((s) => s.sentAt < began + QUIET_MS && s.ok)
    .map((s) => s.ms)
    .sort((a, b) => a - b);
  const quietMedianMs = quiet[Math.floor(quiet.length / 2)] ?? 0;
  const worstMs = Math.max(...samples.filter((s) => s.sentAt >= began + QUIET_MS).map((s) => s.ms));
  return {
    requests: samples.length,
    failed: samples.filter((s) => !s.ok).length,
    quietMedianMs,
    worstMs,
    addedMs: worstMs - quietMedianMs,
    startSeconds,
    stopSeconds,
  };
}

export async function benchExclusiveVolume(): Promise<ExclusiveVolumeResult> {
  const daemon = await startDaemon();
  try {
    const { gitEnv } = await registerSshKey(daemon);
    const deployed = async (name: string, volume: boolean) => {
      const dir = checkoutFixture('sqlite-app');
      const appId = await createApp(daemon, dir, name);
      if (volume) {
        for (const args of [
          ['addon', 'create', 'fs-bucket', `${name}-db`, '--exclusive', '--plan', '64M'],
          ['service', 'link-addon', `${name}-db`, '--app', appId, '--mount', '/data'],
        ]) {
          const done = await daemon.cli(args);
          if (done.code !== 0) throw new Error(`slipway ${args.join(' ')} failed:\n${done.stderr}`);
        }
      }
      const result = await pushAndWait(daemon, dir, appId, gitEnv);
      if (result.state !== 'OK') throw new Error(`the bench app ${name} did not deploy: ${result.state}`);
      return appId;
    };
    const plain = await deployed('plain', false);
    const exclusive = await deployed('ledger', true);
    return { baseline: await measure(daemon, plain), exclusive: await measure(daemon, exclusive) };
  } finally {
    await daemon.stop();
  }
}

export function describeExclusiveVolume(r: ExclusiveVolumeResult): string {
  const start = r.exclusive.startSeconds.length ? Math.max(...r.exclusive.startSeconds) : Number.NaN;
  const line = (what: string, f: SwitchFigures) =>
    `  ${what}: ${f.failed} failed of ${f.requests} requests; median ${f.quietMedianMs} ms when quiet, ` +
    `worst ${f.worstMs} ms during the restarts (+${(f.addedMs / 1000).toFixed(2)} s)`;
  return [
    `exclusive volume, SQLite app under ${RATE_PER_SECOND} requests/s (half POSTs), ${RESTARTS} restarts:`,
    line('without a volume (baseline)', r.baseline),
    line('exclusive volume, handed over', r.exclusive),
    `  new instance's start and health check ${start.toFixed(1)} s at most (${r.exclusive.startSeconds.map((s) => s.toFixed(1)).join(', ')}); ` +
      `added latency of the held requests ${(r.exclusive.addedMs / 1000).toFixed(2)} s ` +
      `(target <= ${(start + 1).toFixed(1)} s: ${r.exclusive.addedMs / 1000 <= start + 1 ? 'met' : 'missed'}); ` +
      `vs the baseline's added ${(r.baseline.addedMs / 1000).toFixed(2)} s`,
    `  of which the old instance's drain and stop: ${r.exclusive.stopSeconds.map((s) => s.toFixed(1)).join(', ')} s`,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  console.log(describeExclusiveVolume(await benchExclusiveVolume()));
}
