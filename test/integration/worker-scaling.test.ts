/**
 * Workers with a range of their own, on the local backend, driven as a user would (the CLI and
 * git push): the app's worker burns a core for a while after it first starts, so its worker instances
 * scale out on their own CPU and back in once it stops; the web instances run no worker; a
 * redeploy replaces the worker instances; `--workers 2` gives exactly two; a daemon restart adopts
 * them as they run. In the main lane, as autoscaling.test.ts: it measures CPU, which a build
 * beside it would take.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp, deploymentLog, getThroughRouter, newRelease, pushAndWait, registerSshKey } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';

/**
 * Short windows so the file takes about a minute; cpu-out low enough for a core shared with the
 * suite's other lanes (a busy machine gives the burning worker a fraction of a core), cpu-in over
 * what an idle worker takes.
 */
const SETTINGS = 'cpu-out=20,cpu-in=5,out-after=3s,in-after=4s,cooldown=2s';
/** Each worker says which instance runs it; the first worker instance's burns a core for 20 s, then idles. */
const WORKER =
  'echo "worker-up $INSTANCE_ID"; if [ "$INSTANCE_NUMBER" = 0 ]; then timeout 20 bash -c "while :; do :; done"; fi; exec sleep 100000';

interface Scale {
  workers: { min: number; max: number; count: number; running: Array<{ id: string; state: string }> } | null;
  decisions: Array<{ direction: string; from: number; to: number; reason: string; outcome: string; target: string }>;
}

let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let dir: string;
let appId: string;

async function cli(args: string[]): Promise<string> {
  const r = await daemon.cli([...args, '--app', appId]);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

async function scale(): Promise<Scale> {
  return JSON.parse(await cli(['scale', '--format', 'json'])) as Scale;
}

/** The instance ids the workers' lines name in the app's log. */
async function workerInstanceIdsInLog(): Promise<Set<string>> {
  const log = await cli(['logs']);
  return new Set([...log.matchAll(/worker-up (instance_[0-9a-f-]+)/g)].map((m) => m[1]!));
}

before(async () => {
  daemon = await startDaemon();
  ({ gitEnv } = await registerSshKey(daemon));
  dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'worker-range', { CC_WORKER_COMMAND: WORKER });
  await cli(['scale', '--min-workers', '1', '--max-workers', '3', '--autoscaling', SETTINGS]);
  const deployed = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(deployed.state, 'OK', (await deploymentLog(daemon, appId, deployed.id)).join('\n'));
});

after(async () => {
  await daemon?.stop();
});

test('busy workers scale their worker instances out, then in once idle; the web instance runs none', async () => {
  assert.equal((await getThroughRouter(daemon, `${appId}.localhost`)).status, 200, 'the web instance serves');
  const out = await waitUntil(
    'the worker instances to scale out',
    async () => (await scale()).decisions.find((d) => d.target === 'workers' && d.direction === 'up'),
    60_000,
  ).catch(async (error: Error) => {
    throw new Error(`${error.message}\n${(await cli(['logs'])).split('\n').slice(-30).join('\n')}`);
  });
  assert.equal(out.from, 1);
  assert.ok(out.to >= 2 && out.to <= 3, JSON.stringify(out));
  assert.match(out.reason, /^CPU \d+% of 1 worker instance for \d+ s$/);
  assert.equal(out.outcome, 'done');
  const text = await cli(['scale']);
  assert.match(text, /workers\s+\d worker instances?[^\n]*\(the autoscaler chooses from 1 to 3\)/);
  assert.match(text, /1 → [23] workers: CPU \d+% of 1 worker instance/);

  // The workers' lines name worker instances only: none of the web instances runs a worker.
  const web = JSON.parse(await cli(['status', '--format', 'json'])) as { instances: Array<{ id: string }> };
  const ids = await waitUntil(
    'the new worker instance to start its worker',
    async () => {
      const seen = await workerInstanceIdsInLog();
      return seen.size >= 2 ? seen : undefined;
    },
    30_000,
  );
  for (const instance of web.instances) assert.ok(!ids.has(instance.id), `web instance ${instance.id} runs a worker`);

  // The burn ends (12 s after each start): the count goes back to the minimum, one at a time.
  const back = await waitUntil(
    'the worker instances to scale back in to 1',
    async () => {
      const s = await scale();
      return s.workers?.count === 1 && s.workers.running.length === 1 ? s : undefined;
    },
    120_000,
  );
  const downs = back.decisions.filter((d) => d.target === 'workers' && d.direction === 'down');
  assert.ok(downs.length >= 1, JSON.stringify(back.decisions));
  assert.match(downs[0]!.reason, /^CPU \d+% of \d worker instances for \d+ s \(under 5% on \d\)$/);
  const activity = JSON.parse(await cli(['activity', '--format', 'json'])) as Array<{ cause: string; message: string | null }>;
  const records = activity.filter((r) => r.cause === 'autoscaling').map((r) => r.message ?? '');
  assert.ok(
    records.some((m) => /^1 → [23] workers: CPU \d+% of 1 worker instance/.test(m)),
    records.join('\n'),
  );
  assert.ok(
    records.some((m) => /^[23] → [12] workers: CPU/.test(m)),
    records.join('\n'),
  );
  const metrics = await fetch(`${daemon.apiUrl}/metrics`, { headers: { authorization: `Bearer ${daemon.adminToken}` } }).then((r) =>
    r.text(),
  );
  assert.match(metrics, new RegExp(`slipway_autoscaling_worker_decisions_total\\{app="${appId}",direction="up"\\} [1-9]`));
});

test('--workers 2 gives exactly two; a redeploy replaces them with the new release', async () => {
  await cli(['scale', '--workers', '2']);
  const two = await waitUntil(
    'two worker instances',
    async () => {
      const s = await scale();
      return s.workers?.running.length === 2 ? s : undefined;
    },
    30_000,
  );
  assert.deepEqual([two.workers?.min, two.workers?.max, two.workers?.count], [2, 2, 2]);
  const before = new Set(two.workers!.running.map((i) => i.id));

  newRelease(dir, 'two');
  const redeployed = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(redeployed.state, 'OK', (await deploymentLog(daemon, appId, redeployed.id)).join('\n'));
  const after = await waitUntil(
    'the old worker instances to be replaced',
    async () => {
      const s = await scale();
      const running = s.workers?.running ?? [];
      return running.length === 2 && running.every((i) => !before.has(i.id)) ? running : undefined;
    },
    30_000,
  );
  const seen = await waitUntil(
    'the new worker instances to run their worker',
    async () => {
      const ids = await workerInstanceIdsInLog();
      return after.every((i) => ids.has(i.id)) ? ids : undefined;
    },
    30_000,
  );
  assert.ok(seen.size >= 4);
  // Still exactly two, whatever their load: the count is fixed.
  assert.equal((await scale()).workers?.running.length, 2);
});

test('a daemon restart adopts the worker instances as they run', async () => {
  const running = (await scale()).workers?.running.map((i) => i.id).sort();
  assert.equal(running?.length, 2);
  await daemon.terminate('SIGTERM');
  await daemon.restart();
  const adopted = await waitUntil(
    'the worker instances to be adopted',
    async () => {
      const s = await scale();
      return s.workers?.running.length === 2 ? s.workers.running.map((i) => i.id).sort() : undefined;
    },
    30_000,
  );
  assert.deepEqual(adopted, running, 'the same worker instances, not new ones');
  assert.equal((await getThroughRouter(daemon, `${appId}.localhost`)).status, 200);
});
