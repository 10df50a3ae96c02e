/**
 * Workers with a range of their own, on the fake platform (the real AppRuntime, store and
 * deployer; the fake backend records what each instance was started with).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { type FakePlatform, fakePlatform } from '../../test/support/fakes/fake-platform.js';
import { KEEP_ALIVE, WORKER_INSTANCE_BASE } from './worker-pool.js';

let p: FakePlatform;
before(async () => {
  p = await fakePlatform({ drainDelayMs: 0 });
});
after(async () => {
  await p.close();
});

const WORKERS = { CC_WORKER_COMMAND: 'node queue.js', CC_WORKER_COMMAND_2: 'node mailer.js', CC_WORKER_RESTART: 'always' };

function deployedWith(name: string, range?: { min: number; max: number; count: number }) {
  const app = p.app(name);
  p.vars.set(app.id, WORKERS);
  if (range) p.store.apps.setWorkerRange(app.id, range);
  return app;
}

test('without a range the workers run beside each instance, as before', async () => {
  const app = deployedWith('beside');
  p.deploy(app, p.release(app, 'a'.repeat(40)));
  await p.settle();
  const [web] = p.runtime.instancesOf(app.id);
  assert.deepEqual(
    web?.spec.workers?.map((w) => [w.name, w.restart]),
    [
      ['worker', 'always'],
      ['worker-2', 'always'],
    ],
  );
  assert.equal(p.runtime.workerInstancesOf(app.id).length, 0);
});

test('with a range: the web instances run none; worker instances of the release run them all, unrouted', async () => {
  const app = deployedWith('apart', { min: 1, max: 3, count: 1 });
  p.deploy(app, p.release(app, 'b'.repeat(40)));
  await p.settle();
  const [web] = p.runtime.instancesOf(app.id);
  assert.deepEqual(web?.spec.workers, []);
  const [worker, ...more] = p.runtime.workerInstancesOf(app.id);
  assert.equal(more.length, 0);
  assert.deepEqual(worker?.spec.command, KEEP_ALIVE);
  assert.deepEqual(
    worker?.spec.workers?.map((w) => w.name),
    ['worker', 'worker-2'],
  );
  assert.equal(worker?.spec.instanceNumber, WORKER_INSTANCE_BASE);
  assert.equal(worker?.spec.env.INSTANCE_NUMBER, '0');
  assert.equal(worker?.spec.deploymentId, web?.spec.deploymentId);
  // Never routed: the router's table has the web instance only.
  const servers = JSON.stringify([...p.runtime.routingTable().values()]);
  assert.ok(servers.includes(`"port":${web?.port}`));
  assert.ok(!servers.includes(`"port":${worker?.port}`));
  // Never health-checked.
  assert.ok(!p.backend.events.some((e) => e.startsWith(`health-check ${worker?.id}`)));

  // A person's count applies at once; the highest numbers stop first.
  p.store.apps.setWorkerInstances(app.id, 3);
  await p.runtime.scaleWorkers(app, () => undefined);
  assert.deepEqual(
    p.runtime.workerInstancesOf(app.id).map((i) => i.spec.instanceNumber - WORKER_INSTANCE_BASE),
    [0, 1, 2],
  );
  p.store.apps.setWorkerInstances(app.id, 2);
  await p.runtime.scaleWorkers(app, () => undefined);
  assert.deepEqual(
    p.runtime.workerInstancesOf(app.id).map((i) => i.spec.env.INSTANCE_NUMBER),
    ['0', '1'],
  );

  // A redeploy: the new release's worker instances start once the web switch is done, the old ones stop.
  const before = p.runtime.workerInstancesOf(app.id);
  const next = p.release(app, 'c'.repeat(40));
  p.deploy(app, next);
  await p.settle();
  await p.runtime.drained();
  const now = p.runtime.workerInstancesOf(app.id);
  assert.equal(now.length, 2);
  assert.ok(now.every((i) => i.spec.deploymentId === p.store.deployments.release(app.id)?.deployment_id));
  assert.ok(before.every((i) => i.state() === 'stopped'));
  const events = p.backend.events;
  const newWeb = p.runtime.instancesOf(app.id)[0]!;
  const switched = events.findIndex((e) => e.startsWith('route') && e.includes(`:${newWeb.port}`));
  assert.ok(switched > 0, 'the new web instance was routed');
  assert.ok(events.indexOf(`start ${now[0]!.id} ${now[0]!.spec.deploymentId}`) > switched, 'worker instances start after the switch');

  // The app's stop ends them like its instances.
  assert.equal(await p.runtime.stop(app.id, 100), true);
  assert.equal(p.runtime.workerInstancesOf(app.id).length, 0);
  assert.ok(now.every((i) => i.state() === 'stopped'));
});

test('a range dropped: the next deployment runs the workers beside each instance again and stops the worker instances', async () => {
  const app = deployedWith('dropped', { min: 1, max: 2, count: 1 });
  p.deploy(app, p.release(app, 'd'.repeat(40)));
  await p.settle();
  const [old] = p.runtime.workerInstancesOf(app.id);
  assert.ok(old);
  p.store.apps.setWorkerRange(app.id, null);
  p.deploy(app, p.release(app, 'e'.repeat(40)));
  await p.settle();
  await p.runtime.drained();
  assert.equal(p.runtime.workerInstancesOf(app.id).length, 0);
  assert.equal(old.state(), 'stopped');
  assert.equal(p.runtime.instancesOf(app.id)[0]?.spec.workers?.length, 2);
});

test("an app's deletion ends its worker instances", async () => {
  const app = deployedWith('deleted', { min: 2, max: 2, count: 2 });
  p.deploy(app, p.release(app, 'f'.repeat(40)));
  await p.settle();
  const workers = p.runtime.workerInstancesOf(app.id);
  assert.equal(workers.length, 2);
  await p.runtime.end(app.id, 100);
  assert.ok(workers.every((i) => i.state() === 'stopped'));
});
