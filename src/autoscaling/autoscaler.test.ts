/**
 * The autoscaler's loop on the fake platform (the real AppRuntime, store and logs; the fake
 * instance backend and router): the CPU readings are the test's, the ticks at synthetic times.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { type FakePlatform, fakePlatform } from '../../test/support/fakes/fake-platform.js';
import type { Instance } from '../instances/backend.js';
import type { AppRow } from '../store/apps.js';
import { type AppliedDecision, Autoscaler } from './autoscaler.js';

let p: FakePlatform;
before(async () => {
  p = await fakePlatform({ drainDelayMs: 0 });
});
after(async () => {
  await p.close();
});

/** A hitless restart of the app's release on the fake platform, as the daemon's deployer makes it. */
async function restart(app: AppRow): Promise<'OK' | 'FAIL' | 'CANCELLED'> {
  const built = p.store.deployments.byId(p.store.deployments.release(app.id)!.deployment_id)!;
  const restarted = p.deploy(app, built);
  await p.settle();
  return p.store.deployments.byId(restarted.id)!.state as 'OK' | 'FAIL' | 'CANCELLED';
}

/**
 * The test's CPU time of each instance, in seconds (`busy` adds that many per tick to each), its
 * memory (`memory`, % of its limit) and the CPU shares given to running instances.
 */
function harness(app: AppRow) {
  const cpu = new Map<string, number>();
  let now = 1_000_000;
  const decisions: AppliedDecision[] = [];
  const load = { busy: 0, queued: 0, memory: 10, requests: 0 };
  const shares: Array<[string, number]> = [];
  const autoscaler = new Autoscaler({
    store: p.store,
    logs: p.logs,
    instancesOf: (appId) =>
      p.runtime.instancesOf(appId).map((i) =>
        Object.assign(Object.create(i) as Instance, {
          cpuTime: () => ({ seconds: cpu.get(i.id) ?? 0 }),
          memoryUsage: () => (i.spec.sandbox.limits.memoryBytes * load.memory) / 100,
          setCpuShare: (cpuShares: number) => shares.push([i.id, cpuShares]),
        }),
      ),
    scale: (a, log) => p.runtime.scaling.scale(a, log),
    restart,
    routerLoad: async () => new Map([[app.id, { sessions: 0, queued: load.queued, total: load.requests }]]),
    sleep: (appId) => p.runtime.scaling.sleep(appId),
    wake: (a, log) => p.runtime.scaling.wake(a, log),
    wakeRequests: () => p.runtime.scaling.wakeRequests(),
    onDecision: (d) => {
      if (d.appId === app.id) decisions.push(d);
    },
    log: () => undefined,
    clock: () => now,
  });
  /** One tick 2 s after the last one, each instance having used `load.busy` of its 2 s. */
  const tick = async () => {
    now += 2000;
    for (const i of p.runtime.instancesOf(app.id)) cpu.set(i.id, (cpu.get(i.id) ?? 0) + 2 * load.busy);
    await autoscaler.tick();
    await autoscaler.idle();
  };
  return { autoscaler, decisions, load, shares, tick, at: () => now };
}

async function deployed(
  name: string,
  ranges: { min: number; max: number; minFlavor?: string; maxFlavor?: string },
  settings: string,
): Promise<AppRow> {
  const app = p.app(name);
  p.deploy(app, p.release(app, 'a'.repeat(40)));
  await p.settle();
  // The fake platform's instances all run pico.
  p.store.apps.setScaling(
    app.id,
    { minInstances: ranges.min, maxInstances: ranges.max, minFlavor: ranges.minFlavor ?? 'pico', maxFlavor: ranges.maxFlavor ?? 'pico' },
    { instances: 1, flavor: 'pico' },
  );
  p.store.apps.setAutoscaling(app.id, settings);
  return p.store.apps.byId(app.id)!;
}

test('a saturated app scales out through the runtime; the decision is recorded, in the activity and told', async () => {
  const app = await deployed('busy', { min: 1, max: 3 }, JSON.stringify({ outAfterMs: 4000, inAfterMs: 6000, cooldownMs: 2000 }));
  const h = harness(app);
  h.load.busy = 0.95;
  for (let k = 0; k < 3 && h.decisions.length === 0; k++) await h.tick();
  assert.equal(h.decisions.length, 1);
  const [d] = h.decisions;
  assert.deepEqual([d!.direction, d!.from, d!.to, d!.outcome, d!.reason], ['up', 1, 2, 'done', 'CPU 95% of 1 instance for 4 s']);
  assert.equal(p.runtime.instancesOf(app.id).length, 2);
  assert.equal(p.store.apps.byId(app.id)?.instances, 2);
  const [row] = p.store.scalingDecisions.latest(app.id);
  assert.deepEqual([row?.from_instances, row?.to_instances, row?.reason, row?.outcome], [1, 2, 'CPU 95% of 1 instance for 4 s', 'done']);
  const activity = p.store.deployments.listForApp(app.id).find((r) => r.cause === 'autoscaling');
  assert.deepEqual([activity?.state, activity?.message], ['OK', '1 → 2 instances: CPU 95% of 1 instance for 4 s']);
  assert.ok(p.logs.lines.get(app.id)?.includes('Autoscaling: 1 → 2 instances: CPU 95% of 1 instance for 4 s'));

  // The cool-down (2 s) passes before the load is judged again; then, idle, it scales back in.
  h.load.busy = 0;
  for (let k = 0; k < 10 && h.decisions.length === 1; k++) await h.tick();
  assert.deepEqual(
    h.decisions.map((x) => [x.from, x.to]),
    [
      [1, 2],
      [2, 1],
    ],
  );
  await p.settle();
  assert.equal(p.runtime.instancesOf(app.id).length, 1);
});

test('a scale-out whose new instance fails its health check is recorded as failed; the count is what serves', async () => {
  const app = await deployed('fails', { min: 1, max: 2 }, JSON.stringify({ outAfterMs: 2000, cooldownMs: 1000 }));
  p.apps.set(p.store.deployments.release(app.id)!.release_dir, { status: (_path, spec) => (spec.instanceNumber === 1 ? 500 : 200) });
  const h = harness(app);
  h.load.busy = 1;
  for (let k = 0; k < 4 && h.decisions.length === 0; k++) await h.tick();
  assert.deepEqual([h.decisions[0]?.outcome, h.decisions[0]?.to], ['failed', 2]);
  assert.equal(p.store.apps.byId(app.id)?.instances, 1, 'the stored count is what serves');
  assert.equal(p.runtime.instancesOf(app.id).length, 1);
  const activity = p.store.deployments.listForApp(app.id).find((r) => r.cause === 'autoscaling');
  assert.equal(activity?.state, 'FAIL');
  assert.match(activity?.message ?? '', /^1 → 2 instances: CPU 100% of 1 instance for 2 s — failed: /);
});

test('a fixed count is left alone; a count that stays apart from the stored one is brought back', async () => {
  const fixed = await deployed('fixed', { min: 1, max: 1 }, JSON.stringify({ outAfterMs: 2000 }));
  const h = harness(fixed);
  h.load.busy = 1;
  for (let k = 0; k < 6; k++) await h.tick();
  assert.deepEqual(h.decisions, []);

  const apart = await deployed('apart', { min: 1, max: 3 }, JSON.stringify({ outAfterMs: 60_000 }));
  const g = harness(apart);
  // As when a deployment started the count of before a decision: 2 recorded, 1 serving.
  p.store.apps.setInstances(apart.id, 2);
  for (let k = 0; k < 17; k++) await g.tick();
  assert.equal(p.runtime.instancesOf(apart.id).length, 2, 'brought to the stored count after 30 s');
  assert.deepEqual(g.decisions, [], 'no decision: only the stored count restored');
});

test('memory near its limit grows the flavour: the CPU share changes at once, the release restarts with it', async () => {
  const app = await deployed('hungry', { min: 1, max: 1, maxFlavor: 'nano' }, JSON.stringify({ outAfterMs: 4000, cooldownMs: 2000 }));
  const h = harness(app);
  h.load.memory = 95;
  const before = p.runtime.instancesOf(app.id)[0]!;
  for (let k = 0; k < 4 && h.decisions.length === 0; k++) await h.tick();
  const [d] = h.decisions;
  assert.deepEqual([d?.flavor, d?.outcome, d?.reason], [{ from: 'pico', to: 'nano' }, 'done', 'memory 95% of pico (256 MiB) for 4 s']);
  assert.deepEqual(h.shares, [[before.id, 512]], "nano's CPU share, given to the running instance");
  assert.equal(p.store.apps.byId(app.id)?.flavor, 'nano');
  assert.notEqual(p.runtime.instancesOf(app.id)[0], before, 'the release restarted: a new instance serves');
  const [row] = p.store.scalingDecisions.latest(app.id);
  assert.deepEqual([row?.from_flavor, row?.to_flavor, row?.outcome], ['pico', 'nano', 'done']);
});

test('a change of flavour whose restart fails puts the flavour and the CPU share back', async () => {
  const app = await deployed('cramped', { min: 1, max: 1, maxFlavor: 'nano' }, JSON.stringify({ outAfterMs: 2000, cooldownMs: 1000 }));
  const first = p.runtime.instancesOf(app.id)[0]!;
  p.apps.set(p.store.deployments.release(app.id)!.release_dir, { status: (_path, spec) => (spec.instanceId === first.id ? 200 : 500) });
  const h = harness(app);
  h.load.memory = 99;
  for (let k = 0; k < 4 && h.decisions.length === 0; k++) await h.tick();
  assert.deepEqual([h.decisions[0]?.flavor?.to, h.decisions[0]?.outcome], ['nano', 'failed']);
  assert.equal(p.store.apps.byId(app.id)?.flavor, 'pico');
  assert.deepEqual(h.shares, [
    [first.id, 512],
    [first.id, 256],
  ]);
  assert.equal(p.runtime.instancesOf(app.id)[0], first, 'the instance of before keeps serving');
});

test('scale to zero: an idle app sleeps (held, no instance), a request wakes it, a restart of the daemon keeps it asleep', async () => {
  const app = await deployed('sleepy', { min: 1, max: 2 }, JSON.stringify({ idleAfterMs: 6000, cooldownMs: 2000 }));
  p.store.apps.setScaleToZero(app.id, true);
  const h = harness(p.store.apps.byId(app.id)!);
  h.load.busy = 0.01;
  // Requests keep it awake; once they stop, idle-after (6 s) later it sleeps.
  for (let k = 0; k < 5; k++) {
    h.load.requests += 3;
    await h.tick();
  }
  assert.equal(h.decisions.length, 0);
  for (let k = 0; k < 8 && h.decisions.length === 0; k++) await h.tick();
  assert.deepEqual(
    h.decisions.map((d) => [d.direction, d.from, d.to, d.reason, d.outcome]),
    [['down', 1, 0, 'no request for 6 s', 'done']],
  );
  await p.runtime.drained();
  assert.equal(p.runtime.instancesOf(app.id).length, 0);
  assert.ok(p.store.apps.byId(app.id)!.asleep_since);
  assert.ok(p.router.asleep.has(app.id), 'its requests are held at the router');
  assert.match((p.logs.lines.get(app.id) ?? []).join('\n'), /Autoscaling: 1 → 0 instances: no request for 6 s; the app sleeps/);

  // Asleep: ticks decide nothing, and the wake poll finds no request yet.
  for (let k = 0; k < 3; k++) await h.tick();
  await h.autoscaler.pollWakes();
  await h.autoscaler.idle();
  assert.equal(h.decisions.length, 1);

  p.router.requestFor(app.id);
  await h.autoscaler.pollWakes();
  await h.autoscaler.idle();
  assert.deepEqual(
    h.decisions.slice(1).map((d) => [d.direction, d.from, d.to, d.reason, d.outcome]),
    [['up', 0, 1, 'a request arrived', 'done']],
  );
  assert.equal(p.runtime.instancesOf(app.id).length, 1);
  assert.equal(p.store.apps.byId(app.id)!.asleep_since, null);
  assert.ok(!p.router.asleep.has(app.id), 'the held requests went on');
  const sleepAt = p.events.indexOf(`sleep ${app.id}`);
  const wakeAt = p.events.indexOf(`wake ${app.id}`);
  assert.ok(sleepAt >= 0 && wakeAt > sleepAt);
  assert.ok(
    p.events.slice(sleepAt, wakeAt).some((e) => e.startsWith('route ') && e.includes('=[127.0.0.1')),
    'the new instance was routed before the requests went on',
  );
});

test('scale to zero: an app with workers never sleeps; a minimum raised while asleep wakes it', async () => {
  const app = await deployed('worker', { min: 1, max: 2 }, JSON.stringify({ idleAfterMs: 4000, cooldownMs: 2000 }));
  p.store.apps.setScaleToZero(app.id, true);
  const h = harness(p.store.apps.byId(app.id)!);
  const withWorkers = new Autoscaler({
    ...(h.autoscaler as unknown as { o: ConstructorParameters<typeof Autoscaler>[0] }).o,
    instancesOf: (appId) =>
      p.runtime.instancesOf(appId).map((i) =>
        Object.assign(Object.create(i) as Instance, {
          spec: { ...i.spec, workers: [{ name: 'worker', command: ['sleep', '1'], restart: 'always', restartDelayMs: 0 }] },
        }),
      ),
  });
  for (let k = 0; k < 10; k++) await withWorkers.tick(h.at() + k * 2000);
  await withWorkers.idle();
  assert.equal(p.store.apps.byId(app.id)!.asleep_since, null);
  assert.equal(p.runtime.instancesOf(app.id).length, 1);

  // Without workers it sleeps; a minimum of 1 set meanwhile wakes it at the next tick.
  for (let k = 0; k < 8 && h.decisions.length === 0; k++) await h.tick();
  assert.equal(h.decisions[0]?.to, 0);
  p.store.apps.setScaleToZero(app.id, false);
  await h.tick();
  assert.deepEqual(
    h.decisions.slice(1).map((d) => [d.direction, d.from, d.to, d.reason]),
    [['up', 0, 1, 'the minimum is 1 instance']],
  );
  assert.equal(p.runtime.instancesOf(app.id).length, 1);
});

test('scale to zero: an app stopped while asleep no longer sleeps, and its requests are not held', async () => {
  const app = await deployed('stopped', { min: 1, max: 2 }, JSON.stringify({ idleAfterMs: 4000, cooldownMs: 2000 }));
  p.store.apps.setScaleToZero(app.id, true);
  const h = harness(p.store.apps.byId(app.id)!);
  for (let k = 0; k < 8 && h.decisions.length === 0; k++) await h.tick();
  assert.equal(h.decisions[0]?.to, 0);
  p.store.deployments.setWanted(app.id, 'stopped');
  p.router.requestFor(app.id);
  await h.autoscaler.pollWakes();
  await h.autoscaler.idle();
  assert.equal(h.decisions.length, 1, 'no wake recorded: nothing started');
  assert.equal(p.runtime.instancesOf(app.id).length, 0);
  assert.equal(p.store.apps.byId(app.id)!.asleep_since, null);
  assert.ok(!p.router.asleep.has(app.id));
});

test('workers of their own range: their CPU scales the worker instances out and in, recorded as workers; the web instances may sleep', async () => {
  const app = p.app('workers-apart');
  p.vars.set(app.id, { CC_WORKER_COMMAND: 'node burn.js' });
  p.store.apps.setWorkerRange(app.id, { min: 1, max: 3, count: 1 });
  p.store.apps.setAutoscaling(app.id, JSON.stringify({ outAfterMs: 4000, inAfterMs: 6000, cooldownMs: 2000, idleAfterMs: 4000 }));
  p.deploy(app, p.release(app, '9'.repeat(40)));
  await p.settle();
  // The web instances' range allows sleep: their workers run apart, so nothing keeps them awake.
  p.store.apps.setScaling(
    app.id,
    { minInstances: 1, maxInstances: 2, minFlavor: 'pico', maxFlavor: 'pico' },
    { instances: 1, flavor: 'pico' },
  );
  p.store.apps.setScaleToZero(app.id, true);
  const h = harness(p.store.apps.byId(app.id)!);
  const workerCpu = new Map<string, number>();
  const autoscaler = new Autoscaler({
    ...(h.autoscaler as unknown as { o: ConstructorParameters<typeof Autoscaler>[0] }).o,
    workerInstancesOf: (appId) =>
      p.runtime
        .workerInstancesOf(appId)
        .map((i) => Object.assign(Object.create(i) as Instance, { workerCpuTime: () => ({ seconds: workerCpu.get(i.id) ?? 0 }) })),
    scaleWorkers: (a, log) => p.runtime.scaleWorkers(a, log),
  });
  let now = h.at();
  let busy = 0.95;
  const tick = async () => {
    now += 2000;
    for (const i of p.runtime.workerInstancesOf(app.id)) workerCpu.set(i.id, (workerCpu.get(i.id) ?? 0) + 2 * busy);
    await autoscaler.tick(now);
    await autoscaler.idle();
  };
  for (let k = 0; k < 4 && h.decisions.every((d) => d.target !== 'workers'); k++) await tick();
  const out = h.decisions.find((d) => d.target === 'workers');
  assert.deepEqual([out?.direction, out?.from, out?.to, out?.reason], ['up', 1, 2, 'CPU 95% of 1 worker instance for 4 s']);
  assert.equal(p.runtime.workerInstancesOf(app.id).length, 2);
  assert.equal(p.store.apps.byId(app.id)?.worker_instances, 2);
  const [row] = p.store.scalingDecisions.latest(app.id);
  assert.deepEqual([row?.target, row?.from_instances, row?.to_instances], ['workers', 1, 2]);
  const activity = p.store.deployments.listForApp(app.id).filter((r) => r.cause === 'autoscaling');
  assert.ok(activity.some((r) => r.state === 'OK' && r.message === '1 → 2 workers: CPU 95% of 1 worker instance for 4 s'));

  busy = 0;
  for (let k = 0; k < 10 && h.decisions.filter((d) => d.target === 'workers').length < 2; k++) await tick();
  const down = h.decisions.filter((d) => d.target === 'workers')[1];
  assert.deepEqual([down?.direction, down?.from, down?.to], ['down', 2, 1]);
  await p.settle();
  assert.equal(p.runtime.workerInstancesOf(app.id).length, 1);
  // Idle all along, the web instances slept meanwhile; the worker instance goes on.
  assert.ok(p.store.apps.byId(app.id)?.asleep_since, 'the web instances sleep');
  assert.equal(p.runtime.instancesOf(app.id).length, 0);
  assert.equal(p.runtime.workerInstancesOf(app.id)[0]?.state(), 'running');
});
