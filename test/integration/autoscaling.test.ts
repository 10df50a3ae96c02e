/**
 * Autoscaling on the local backend, driven as a user would: ranges set and printed with the CLI,
 * a CPU-burning request load of the test's own on loopback makes the app scale out, and once it
 * stops the app scales back in with no failed request; a maximum over the organisation's quota
 * is refused. Short windows come from the app's own settings (`scale --autoscaling`).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutFixture, createApp, getThroughRouter, pushAndWait, registerSshKey } from '../support/deploy.js';
import { pacedLoad } from '../support/paced-load.js';
import { waitUntil } from '../support/wait.js';

/**
 * Short windows, so the file takes well under two minutes. On a machine busy with other tests an
 * instance may get too little CPU to reach any CPU bar: requests piling up in it (in flight at
 * the router) say it is saturated all the same.
 */
const SETTINGS = 'cpu-out=40,cpu-in=10,inflight-out=3,out-after=4s,in-after=6s,cooldown=4s';
/** What the CPU-burning load's decision says: the CPU, or on a busy machine the requests piling up (or both in turn). */
const SATURATED =
  '(?:CPU \\d+% of 1 instance for \\d+ s|\\d+ requests in flight per instance for \\d+ s|1 instance saturated for \\d+ s \\([^)]*\\))';

let daemon: TestDaemon;
let appId: string;
let host: string;
/** A webhook receiver of the test's own on loopback: the scaling events delivered to it. */
let receiver: Server;
let hookUrl: string;
const delivered: Array<{ headers: IncomingHttpHeaders; body: string }> = [];

interface Scale {
  instances: number;
  flavor: string;
  min_instances: number;
  max_instances: number;
  autoscaling: string;
  decisions: Array<{
    direction: string;
    from: number;
    to: number;
    from_flavor: string | null;
    to_flavor: string | null;
    reason: string;
    outcome: string;
  }>;
}

async function scale(): Promise<Scale> {
  const shown = await daemon.cli(['scale', '--app', appId, '--format', 'json']);
  assert.equal(shown.code, 0, shown.stderr);
  return JSON.parse(shown.stdout) as Scale;
}

before(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      delivered.push({ headers: req.headers, body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/scaling`;
  daemon = await startDaemon();
  const { gitEnv } = await registerSshKey(daemon);
  const dir = checkoutFixture('cpu-burner');
  appId = await createApp(daemon, dir, 'burner');
  host = `${appId}.localhost`;
  const deployed = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(deployed.state, 'OK', deployed.push);
});

after(async () => {
  await daemon?.stop();
  receiver?.close();
});

test('ranges are set and printed; contradictory ones are refused with what to give', async () => {
  const set = await daemon.cli(['scale', '--app', appId, '--min-instances', '1', '--max-instances', '2', '--autoscaling', SETTINGS]);
  assert.equal(set.code, 0, set.stderr);
  assert.match(set.stdout, /^instances\s+1 \(the autoscaler chooses from 1 to 2\)$/m);
  assert.match(
    set.stdout,
    /^autoscaling\s+cpu-out=40,cpu-in=10,inflight-out=3,mem-out=90,mem-in=50,out-after=4s,in-after=6s,cooldown=4s,idle-after=15m$/m,
  );
  assert.match(set.stdout, /^last decisions\s+\(none yet\)$/m);
  const json = await scale();
  assert.deepEqual([json.instances, json.min_instances, json.max_instances, json.decisions], [1, 1, 2, []]);

  const reversed = await daemon.cli(['scale', '--app', appId, '--min-instances', '3', '--max-instances', '2']);
  assert.equal(reversed.code, 1);
  assert.match(reversed.stderr, /The minimum of instances \(3\) is over the maximum \(2\)/);
  const badSetting = await daemon.cli(['scale', '--app', appId, '--autoscaling', 'cpu-out=5']);
  assert.equal(badSetting.code, 1);
  assert.match(badSetting.stderr, /cpu-in \(10\) must be under cpu-out \(5\)/);
  assert.equal((await scale()).max_instances, 2, 'a refused change changes nothing');

  const hook = await daemon.cli([
    'webhooks',
    'add',
    'scaling',
    hookUrl,
    '--event',
    'scaling.up',
    '--event',
    'scaling.down',
    '--app',
    appId,
  ]);
  assert.equal(hook.code, 0, hook.stderr);
});

test('a maximum beyond the organisation quota is refused, naming the quota', async () => {
  const quota = await daemon.cli(['org', 'quota', 'set', 'default', '--instances', '3']);
  assert.equal(quota.code, 0, quota.stderr);
  try {
    const over = await daemon.cli(['scale', '--app', appId, '--max-instances', '4']);
    assert.equal(over.code, 1);
    assert.match(over.stderr, /organisation default has 2 of 3 instances; this would make 4 \(quota instances\)/);
    assert.equal((await scale()).max_instances, 2);
  } finally {
    await daemon.cli(['org', 'quota', 'set', 'default', '--instances', 'default']);
  }
});

test('CPU-burning requests scale it out; once they stop it scales back in, with no failed request', async () => {
  const stepAt = Date.now();
  // Six requests at a time, each burning 50 ms of CPU: one instance is busy all the time.
  const burn = pacedLoad(daemon, host, { path: '/burn?ms=50', concurrency: 6, pauseMs: 0, maxMs: 60_000 });
  const out = await waitUntil('a scale-out decision', async () => (await scale()).decisions.find((d) => d.direction === 'up'), 45_000);
  assert.deepEqual([out.from, out.to, out.outcome], [1, 2, 'done']);
  assert.match(out.reason, new RegExp(`^${SATURATED}$`));
  const second = await waitUntil('the second instance to answer', () => burn.result().firstAnswerOf.get('1'), 20_000);
  const burnt = await burn.stop();
  assert.equal(burnt.failureCount, 0, burnt.failures.join('\n'));
  console.log(`# the second instance answered ${((second - stepAt) / 1000).toFixed(1)} s after the load began`);
  assert.ok(second - stepAt < 40_000, `the second instance answered ${second - stepAt} ms after the load began`);

  const human = await daemon.cli(['scale', '--app', appId]);
  assert.match(human.stdout, /^instances\s+2 \(the autoscaler chooses from 1 to 2\)$/m);
  assert.match(human.stdout, new RegExp(`^\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d {2}1 → 2 instances: ${SATURATED}$`, 'm'));

  // A gentle load goes on through the scale-in: every request must be answered.
  const gentle = pacedLoad(daemon, host, { path: '/', concurrency: 2, pauseMs: 100, maxMs: 60_000 });
  const down = await waitUntil('a scale-in decision', async () => (await scale()).decisions.find((d) => d.direction === 'down'), 45_000);
  assert.deepEqual([down.from, down.to, down.outcome], [2, 1, 'done']);
  assert.match(down.reason, /^CPU \d+% of 2 instances for \d+ s \(under 10% on 1\)$/);
  // The drained instance finishes what it has, then stops; the requests meanwhile still answer.
  await new Promise((r) => setTimeout(r, 4000));
  const calm = await gentle.stop();
  assert.equal(calm.failureCount, 0, calm.failures.join('\n'));
  assert.ok(calm.ok > 20, `the gentle load was answered ${calm.ok} times`);
  assert.equal((await scale()).instances, 1);

  // The decisions are in the app's activity, in the metrics and told to the webhook.
  const activity = await daemon.cli(['activity', '--app', appId, '--format', 'json']);
  const causes = (JSON.parse(activity.stdout) as Array<{ cause: string; message: string | null }>).filter((d) => d.cause === 'autoscaling');
  assert.deepEqual(
    causes.map((d) => d.message?.replace(/:.*/, '')),
    ['2 → 1 instances', '1 → 2 instances'],
  );
  const metrics = await fetch(`${daemon.apiUrl}/metrics`, { headers: { authorization: `Bearer ${daemon.adminToken}` } });
  const text = await metrics.text();
  assert.match(text, new RegExp(`slipway_autoscaling_decisions_total\\{app="${appId}",direction="up"\\} 1`));
  assert.match(text, new RegExp(`slipway_autoscaling_decisions_total\\{app="${appId}",direction="down"\\} 1`));
  const events = await waitUntil('both scaling events at the webhook', () => (delivered.length >= 2 ? delivered : undefined), 30_000);
  assert.deepEqual(events.map((e) => e.headers['x-slipway-event']).sort(), ['scaling.down', 'scaling.up']);
  const upEvent = events.find((e) => e.headers['x-slipway-event'] === 'scaling.up')!;
  const up = JSON.parse(upEvent.body) as { app: { id: string }; details: Record<string, unknown> };
  assert.equal(up.app.id, appId);
  assert.deepEqual([up.details.from, up.details.to, up.details.outcome], [1, 2, 'done']);
  assert.equal(up.details.reason, out.reason);
});

test('memory near its limit takes the next flavour through a hitless restart', async () => {
  const set = await daemon.cli([
    'scale',
    '--app',
    appId,
    '--instances',
    '1',
    '--min-flavor',
    'nano',
    '--max-flavor',
    'XS',
    '--autoscaling',
    'mem-out=40,mem-in=5',
  ]);
  assert.equal(set.code, 0, set.stderr);
  assert.match(set.stdout, /^flavor\s+nano \(512 MiB\) \(the autoscaler chooses from nano to XS\)$/m);
  const gentle = pacedLoad(daemon, host, { path: '/', concurrency: 2, pauseMs: 100, maxMs: 90_000 });
  // About 220 MiB kept by the instance: over 40% of nano's 512 MiB.
  assert.equal((await getThroughRouter(daemon, host, '/hold?mb=220')).status, 200);
  const up = await waitUntil('a change of flavour', async () => (await scale()).decisions.find((d) => d.to_flavor !== null), 60_000);
  assert.deepEqual([up.from_flavor, up.to_flavor, up.outcome], ['nano', 'XS', 'done']);
  assert.match(up.reason, /^memory \d+% of nano \(512 MiB\) for \d+ s$/);
  const calm = await gentle.stop();
  assert.equal(calm.failureCount, 0, calm.failures.join('\n'));
  assert.equal((await scale()).flavor, 'XS');
  const human = await daemon.cli(['scale', '--app', appId]);
  assert.match(human.stdout, /^\s+\S+ \S+ {2}nano → XS: memory \d+% of nano \(512 MiB\) for \d+ s$/m);
  const activity = await daemon.cli(['activity', '--app', appId, '--format', 'json']);
  const [restart] = (JSON.parse(activity.stdout) as Array<{ cause: string; state: string }>).filter((d) => d.cause === 'autoscaling');
  assert.equal(restart?.state, 'OK', 'the restart with the new flavour is in the activity');
});
