/**
 * AppRuntime on the fake instance backend and the fake router (no root): scaling, a crashed
 * instance leaving the routing table, requests reaching the instances through the router.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { FAKE_DOMAIN, type FakePlatform, fakePlatform } from '../../test/support/fakes/fake-platform.js';
import type { FakeInstance } from '../../test/support/fakes/fake-instance-backend.js';
import { waitUntil } from '../../test/support/wait.js';

let p: FakePlatform;
before(async () => {
  p = await fakePlatform();
});
after(async () => {
  await p.close();
});

const upstreamPorts = (appId: string) => (p.router.upstreamsOf(`${appId}.${FAKE_DOMAIN}`) ?? []).map((u) => u.port).sort();
const servingPorts = (appId: string) =>
  p.runtime
    .instancesOf(appId)
    .map((i) => i.port)
    .sort();

function getThroughRouter(host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: p.router.port, path: '/', headers: { host }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

test('scaling up starts health-checked instances that join the table; scaling down drains the highest numbers', async () => {
  const app = p.app('scale');
  p.deploy(app, p.release(app, 'a'.repeat(40)));
  await p.settle();
  const [first] = p.runtime.instancesOf(app.id);

  p.store.apps.setInstances(app.id, 3);
  await p.runtime.scaling.scale(p.store.apps.byId(app.id)!, () => undefined);
  const three = p.runtime.instancesOf(app.id);
  assert.equal(three.length, 3);
  assert.equal(three[0], first, 'the serving instance stays');
  assert.deepEqual(
    three.map((i) => i.spec.instanceNumber),
    [0, 1, 2],
  );
  for (const i of three.slice(1)) assert.ok(p.events.indexOf(`health-check ${i.id} /`) >= 0, `${i.id} was health-checked`);
  assert.deepEqual(upstreamPorts(app.id), servingPorts(app.id));

  p.store.apps.setInstances(app.id, 1);
  await p.runtime.scaling.scale(p.store.apps.byId(app.id)!, () => undefined);
  await p.settle();
  assert.deepEqual(p.runtime.instancesOf(app.id), [first]);
  assert.deepEqual(upstreamPorts(app.id), [first!.port]);
  for (const i of three.slice(1)) assert.equal(i.state(), 'stopped');
});

test('two scales of one app at once run one after the other: the count stored is what serves', async () => {
  const app = p.app('scale-twice');
  p.deploy(app, p.release(app, 'b'.repeat(40)));
  await p.settle();
  p.store.apps.setInstances(app.id, 3);
  const row = p.store.apps.byId(app.id)!;
  await Promise.all([p.runtime.scaling.scale(row, () => undefined), p.runtime.scaling.scale(row, () => undefined)]);
  assert.deepEqual(
    p.runtime.instancesOf(app.id).map((i) => i.spec.instanceNumber),
    [0, 1, 2],
  );
  assert.deepEqual(upstreamPorts(app.id), servingPorts(app.id));
});

test('scaling up when one new instance fails its health check keeps the healthy ones and leaves nothing running outside the table', async () => {
  const app = p.app('scale-partly');
  p.vars.set(app.id, { CC_HEALTH_CHECK_PATH: '/ready' });
  p.deploy(app, p.release(app, 'e'.repeat(40), { status: (path, spec) => (path === '/ready' && spec.instanceNumber === 2 ? 500 : 200) }));
  await p.settle();
  p.store.apps.setInstances(app.id, 3);
  await assert.rejects(
    p.runtime.scaling.scale(p.store.apps.byId(app.id)!, () => undefined),
    /Health check failed/,
  );
  const serving = p.runtime.instancesOf(app.id);
  assert.deepEqual(
    serving.map((i) => i.spec.instanceNumber),
    [0, 1],
  );
  assert.deepEqual(upstreamPorts(app.id), servingPorts(app.id));
  const running = p.backend.list().filter((i) => i.spec.appId === app.id);
  assert.deepEqual(running.map((i) => i.id).sort(), serving.map((i) => i.id).sort(), 'no instance runs outside the table');
});

test('a new deployment starts as many instances as the app is scaled to', async () => {
  const app = p.app('scaled-deploy');
  p.store.apps.setInstances(app.id, 2);
  p.deploy(app, p.release(app, 'b'.repeat(40)));
  await p.settle();
  assert.equal(p.runtime.instancesOf(app.id).length, 2);
  assert.equal(upstreamPorts(app.id).length, 2);
});

test('the router sends requests to the serving instance, answers 503 once it is stopped and 404 for an unknown host', async () => {
  const app = p.app('through-router');
  p.deploy(app, p.release(app, 'c'.repeat(40)));
  await p.settle();
  const [instance] = p.runtime.instancesOf(app.id);
  const host = `${app.id}.${FAKE_DOMAIN}`;
  assert.deepEqual(await getThroughRouter(host), { status: 200, body: `${instance!.id}\n` });
  await p.runtime.stop(app.id);
  assert.equal((await getThroughRouter(host)).status, 503);
  assert.equal((await getThroughRouter(`nobody.${FAKE_DOMAIN}`)).status, 404);
});

test('a crashed instance leaves the routing table and comes back once it runs again', async () => {
  const app = p.app('crash');
  p.store.apps.setInstances(app.id, 2);
  p.deploy(app, p.release(app, 'd'.repeat(40)));
  await p.settle();
  const [a, b] = p.runtime.instancesOf(app.id) as FakeInstance[];
  a!.crash(200);
  await waitUntil('the crashed instance to leave the table', () => upstreamPorts(app.id).join() === String(b!.port), 3000);
  await waitUntil('the restarted instance to come back', () => upstreamPorts(app.id).length === 2, 3000);
  assert.equal(a!.restarts(), 1);
});
