/**
 * The switch of an app with an exclusive volume, on the fake backend and router (no root): the
 * order of hold, stop, start, health check, route and release; a failed release giving the volume
 * back to the previous one; a stuck instance stopped before its replacement starts; other apps
 * switching as before.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { FAKE_DOMAIN, type FakePlatform, fakePlatform } from '../../test/support/fakes/fake-platform.js';
import type { Instance } from '../instances/backend.js';
import type { InstanceReplacement } from './instance-replacement.js';

const exclusive = new Set<string>();
let p: FakePlatform;
before(async () => {
  p = await fakePlatform({ exclusiveApps: exclusive });
});
after(async () => {
  await p.close();
});

/** Where each event first happened; throws for one that did not. */
function at(event: string): number {
  const index = p.events.indexOf(event);
  assert.ok(index >= 0, `no "${event}" in:\n${p.events.join('\n')}`);
  return index;
}

const routedTo = (appId: string, instances: readonly Instance[]) =>
  `route ${`${appId}.${FAKE_DOMAIN}`}=[${instances.map((i) => `${i.address}:${i.port}`).join(',')}]`;

function routeEventOf(appId: string, instances: readonly Instance[]): number {
  const wanted = routedTo(appId, instances);
  const index = p.events.findIndex((e) => e.split(' ').includes(wanted.slice('route '.length)));
  assert.ok(index >= 0, `never routed ${wanted}`);
  return index;
}

test('a deploy holds the requests, stops the old instance, starts the new one on the volume, routes to it, then releases', async () => {
  const app = p.app('ledger');
  exclusive.add(app.id);
  p.deploy(app, p.release(app, 'a'.repeat(40)));
  await p.settle();
  const [old] = p.runtime.instancesOf(app.id);
  const second = p.release(app, 'b'.repeat(40));
  p.events.length = 0;
  const deployment = p.deploy(app, second);
  await p.settle();
  const [fresh] = p.runtime.instancesOf(app.id);
  assert.equal(fresh!.spec.deploymentId, deployment.id);
  const hold = at(`hold ${app.id}`);
  const stopOld = at(`stop ${old!.id}`);
  const startNew = at(`start ${fresh!.spec.instanceId} ${deployment.id}`);
  const healthy = at(`health-check ${fresh!.id} /`);
  const routed = routeEventOf(app.id, [fresh!]);
  const release = at(`release ${app.id}`);
  assert.ok(hold < stopOld && stopOld < startNew && startNew < healthy && healthy < routed && routed < release, p.events.join('\n'));
});

test('a release that fails its health check stops, and the previous release starts again on the volume and serves', async () => {
  const app = p.app('ledger-bad');
  exclusive.add(app.id);
  const good = p.deploy(app, p.release(app, 'c'.repeat(40)));
  await p.settle();
  const [old] = p.runtime.instancesOf(app.id);
  const bad = p.release(app, 'd'.repeat(40), { status: () => 500 });
  p.events.length = 0;
  const deployment = p.deploy(app, bad);
  await p.settle();
  assert.equal(p.store.deployments.byId(deployment.id)!.state, 'FAIL');
  const [back] = p.runtime.instancesOf(app.id);
  assert.equal(back!.spec.deploymentId, good.id, 'the previous release serves');
  assert.notEqual(back, old, 'in a new instance: the old one gave the volume up');
  const stopOld = at(`stop ${old!.id}`);
  const startBad = p.events.findIndex((e) => e.startsWith('start ') && e.endsWith(deployment.id));
  const startBack = at(`start ${back!.spec.instanceId} ${good.id}`);
  const release = at(`release ${app.id}`);
  assert.ok(stopOld < startBad && startBad < startBack && startBack < release, p.events.join('\n'));
  assert.ok(routeEventOf(app.id, [back!]) < release);
  const log = (p.logs.lines.get(deployment.id) ?? []).join('\n');
  assert.match(log, /The new release did not start: the previous one starts again on the volume/);
  assert.match(log, /The previous release keeps serving/);
});

test('an app without an exclusive volume switches as before: new instance first, no hold', async () => {
  const app = p.app('shared');
  p.deploy(app, p.release(app, 'e'.repeat(40)));
  await p.settle();
  const [old] = p.runtime.instancesOf(app.id);
  p.events.length = 0;
  p.deploy(app, p.release(app, 'f'.repeat(40)));
  await p.settle();
  const [fresh] = p.runtime.instancesOf(app.id);
  assert.ok(!p.events.some((e) => e.startsWith('hold ')), p.events.join('\n'));
  assert.ok(at(`health-check ${fresh!.id} /`) < at(`stop ${old!.id}`), 'the old one stops after the new one is healthy');
});

test('a stuck instance of an app with an exclusive volume stops before its replacement starts, requests held meanwhile', async () => {
  const app = p.app('ledger-stuck');
  exclusive.add(app.id);
  p.deploy(app, p.release(app, '1'.repeat(40)));
  await p.settle();
  const [stuck] = p.runtime.instancesOf(app.id);
  p.events.length = 0;
  // The liveness monitor's call, made directly: when it decides is liveness-monitor.test.ts's concern.
  const { replacement } = p.runtime as unknown as { replacement: InstanceReplacement };
  const fresh = await replacement.replaceInstance(app, stuck!, () => undefined);
  assert.ok(fresh);
  assert.deepEqual(p.runtime.instancesOf(app.id), [fresh]);
  const hold = at(`hold ${app.id}`);
  const stop = at(`stop ${stuck!.id}`);
  const start = at(`start ${fresh.spec.instanceId} ${fresh.spec.deploymentId}`);
  const release = at(`release ${app.id}`);
  assert.ok(
    hold < stop && stop < start && start < routeEventOf(app.id, [fresh]) && routeEventOf(app.id, [fresh]) < release,
    p.events.join('\n'),
  );
});
