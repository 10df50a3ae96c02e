/**
 * What autoscaling does for an app under a load step (issue 35, item 3): a CPU-burning app (the
 * Node one of test/fixtures/cpu-burner, or its Scala twin in scala-cpu-burner) under an open-loop load of BASE_RATE requests a second (each
 * burning BURN_MS of CPU), stepped to STEP× for STEP_MS, then back. The app has a range of 1 to
 * MAX_INSTANCES instances and the autoscaler's default settings; the baseline is the same app at a
 * fixed single instance, in the same run under the same load. Printed: when the first new
 * instance served after the step (target <= 20 s, Scala 40 s), when the p95 latency came back under its
 * target (TARGET_FACTOR × the quiet p95, at least MIN_TARGET_MS; target within 60 s), and the
 * failed requests throughout, the scale-in after the step included (target 0).
 *
 *   node --import tsx bench/autoscaling.ts [scala]
 */
import { Agent, request } from 'node:http';
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDaemon, type TestDaemon } from '../test/support/daemon.js';
import { checkoutFixture, createApp, pushAndWait, registerSshKey } from '../test/support/deploy.js';

const BASE_RATE = 5;
const STEP = 20;
const BURN_MS = 15;
const QUIET_MS = 10_000;
const STEP_MS = 60_000;
const MAX_INSTANCES = 4;
/** After the step, how long the load stays at its base rate waiting for the scale-in. */
const AFTER_MS = 100_000;
const TARGET_FACTOR = 3;
const MIN_TARGET_MS = 100;

interface Sample {
  sentAt: number;
  ms: number;
  ok: boolean;
  instance: string | null;
}

export interface StepFigures {
  requests: number;
  failed: number;
  quietP95Ms: number;
  targetMs: number;
  /** Seconds from the step to the first answer of an instance that did not serve before it. */
  firstNewServesS: number | null;
  /** Seconds from the step until every later second of the step had its p95 under the target. */
  p95RecoveredS: number | null;
  worstP95Ms: number;
  /** The instance count at the end of the step and at the end of the run. */
  instancesAtStepEnd: number;
  instancesAtEnd: number;
}

export interface AutoscalingBenchResult {
  app: BenchApp;
  fixed: StepFigures;
  autoscaled: StepFigures;
}

/** The app under the step, and the target for its first new instance. */
export interface BenchApp {
  label: string;
  fixture: string;
  type: string;
  firstNewTargetS: number;
}

export const NODE_APP: BenchApp = { label: 'Node app', fixture: 'cpu-burner', type: 'node', firstNewTargetS: 20 };
export const SCALA_APP: BenchApp = { label: 'Scala app', fixture: 'scala-cpu-burner', type: 'sbt', firstNewTargetS: 40 };

function once(daemon: TestDaemon, host: string, agent: Agent): Promise<Sample> {
  const sentAt = Date.now();
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port: daemon.routerPort, path: `/burn?ms=${BURN_MS}`, agent, timeout: 120_000, headers: { host } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => {
          let instance: string | null = null;
          try {
            instance = String((JSON.parse(body) as { instance?: unknown }).instance);
          } catch {
            // counted by its status
          }
          resolve({ sentAt, ms: Date.now() - sentAt, ok: res.statusCode === 200, instance });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve({ sentAt, ms: Date.now() - sentAt, ok: false, instance: null }));
    req.end();
  });
}

/** Open loop: requests leave at the rate asked whatever the answers, as users' requests do. */
function openLoad(daemon: TestDaemon, host: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 512 });
  const pending: Array<Promise<Sample>> = [];
  let rate = BASE_RATE;
  let timer: NodeJS.Timeout | undefined;
  const pace = () => {
    clearInterval(timer);
    timer = setInterval(() => pending.push(once(daemon, host, agent)), 1000 / rate);
  };
  pace();
  return {
    setRate(perSecond: number) {
      rate = perSecond;
      pace();
    },
    async stop(): Promise<Sample[]> {
      clearInterval(timer);
      const samples = await Promise.all(pending);
      agent.destroy();
      return samples;
    },
  };
}

const p95 = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))] ?? 0;
};

async function instanceCount(daemon: TestDaemon, appId: string): Promise<number> {
  const shown = await daemon.cli(['scale', '--app', appId, '--format', 'json']);
  return (JSON.parse(shown.stdout) as { instances: number }).instances;
}

async function measure(daemon: TestDaemon, appId: string, autoscaled: boolean): Promise<StepFigures> {
  const load = openLoad(daemon, `${appId}.localhost`);
  await sleep(QUIET_MS);
  const stepAt = Date.now();
  load.setRate(BASE_RATE * STEP);
  await sleep(STEP_MS);
  const stepEnd = Date.now();
  const instancesAtStepEnd = await instanceCount(daemon, appId);
  load.setRate(BASE_RATE);
  // The scale-in: the load goes on at its base rate until the count is back to one.
  const deadline = Date.now() + AFTER_MS;
  while (autoscaled && Date.now() < deadline && (await instanceCount(daemon, appId)) > 1) await sleep(2000);
  await sleep(5000);
  const samples = await load.stop();
  const instancesAtEnd = await instanceCount(daemon, appId);

  const quiet = samples.filter((s) => s.sentAt < stepAt && s.ok).map((s) => s.ms);
  const quietP95Ms = p95(quiet);
  const targetMs = Math.max(MIN_TARGET_MS, TARGET_FACTOR * quietP95Ms);
  const before = new Set(samples.filter((s) => s.sentAt < stepAt).map((s) => s.instance));
  const firstNew = samples
    .filter((s) => s.sentAt >= stepAt && s.ok && !before.has(s.instance))
    .map((s) => s.sentAt + s.ms)
    .sort((a, b) => a - b)[0];
  // Each second of the step by the time its requests were sent: its p95.
  const seconds = Math.floor((stepEnd - stepAt) / 1000);
  const perSecond = Array.from({ length: seconds }, (_, k) =>
    p95(samples.filter((s) => s.sentAt >= stepAt + k * 1000 && s.sentAt < stepAt + (k + 1) * 1000).map((s) => s.ms)),
  );
  let recovered: number | null = null;
  for (let k = seconds - 1; k >= 0 && perSecond[k]! <= targetMs; k--) recovered = k;
  return {
    requests: samples.length,
    failed: samples.filter((s) => !s.ok).length,
    quietP95Ms,
    targetMs,
    firstNewServesS: firstNew === undefined ? null : (firstNew - stepAt) / 1000,
    p95RecoveredS: recovered,
    worstP95Ms: Math.max(...perSecond),
    instancesAtStepEnd,
    instancesAtEnd,
  };
}

export async function benchAutoscaling(app: BenchApp = NODE_APP): Promise<AutoscalingBenchResult> {
  const daemon = await startDaemon();
  try {
    const { gitEnv } = await registerSshKey(daemon);
    const deployed = async (name: string, scaleArgs: string[]) => {
      const dir = checkoutFixture(app.fixture);
      const appId = await createApp(daemon, dir, name, {}, app.type);
      const result = await pushAndWait(daemon, dir, appId, gitEnv);
      if (result.state !== 'OK') throw new Error(`the bench app ${name} did not deploy: ${result.state}`);
      const scaled = await daemon.cli(['scale', '--app', appId, ...scaleArgs]);
      if (scaled.code !== 0) throw new Error(`slipway scale failed:\n${scaled.stderr}`);
      return appId;
    };
    const fixed = await deployed('fixed', ['--instances', '1']);
    const ranged = await deployed('ranged', ['--min-instances', '1', '--max-instances', String(MAX_INSTANCES)]);
    return { app, fixed: await measure(daemon, fixed, false), autoscaled: await measure(daemon, ranged, true) };
  } finally {
    await daemon.stop();
  }
}

export function describeAutoscaling(r: AutoscalingBenchResult): string {
  const s = (value: number | null) => (value === null ? 'never' : `${value.toFixed(1)} s`);
  const line = (what: string, f: StepFigures) =>
    `  ${what}: ${f.failed} failed of ${f.requests}; quiet p95 ${f.quietP95Ms} ms (target ${f.targetMs} ms), worst second's p95 ${f.worstP95Ms} ms; ` +
    `p95 back under target ${s(f.p95RecoveredS)} after the step; first new instance served ${s(f.firstNewServesS)} after it; ` +
    `${f.instancesAtStepEnd} instance(s) at the step's end, ${f.instancesAtEnd} at the end`;
  const a = r.autoscaled;
  return [
    `autoscaling, ${r.app.label} burning ${BURN_MS} ms a request: ${BASE_RATE} -> ${BASE_RATE * STEP} requests/s for ${STEP_MS / 1000} s, then back:`,
    line(`fixed single instance (baseline)`, r.fixed),
    line(`range 1 to ${MAX_INSTANCES}, default settings`, a),
    `  targets: first new instance <= ${r.app.firstNewTargetS} s (${a.firstNewServesS !== null && a.firstNewServesS <= r.app.firstNewTargetS ? 'met' : 'missed'}), ` +
      `p95 back within 60 s (${a.p95RecoveredS !== null && a.p95RecoveredS <= 60 ? 'met' : 'missed'}), 0 failed (${a.failed === 0 ? 'met' : 'missed'})`,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  console.log(describeAutoscaling(await benchAutoscaling(process.argv[2] === 'scala' ? SCALA_APP : NODE_APP)));
}
