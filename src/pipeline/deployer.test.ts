/**
 * The deploy logic after the build, on the fake instance backend and the fake router (no root):
 * what a deployment does to the serving release when the new one is healthy, unhealthy or
 * cannot start; the order of the queue; rollback. test/integration/ covers the same paths with
 * real builds, sandboxes and nginx.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FAKE_DOMAIN, type FakePlatform, fakePlatform } from '../../test/support/fakes/fake-platform.js';

let p: FakePlatform;
before(async () => {
  p = await fakePlatform();
});
after(async () => {
  await p.close();
});

const upstreamPorts = (appId: string) => (p.router.upstreamsOf(`${appId}.${FAKE_DOMAIN}`) ?? []).map((u) => u.port);
const servingPorts = (appId: string) => p.runtime.instancesOf(appId).map((i) => i.port);
const state = (id: string) => p.store.deployments.byId(id)!.state;
const deploymentLog = async (id: string) => (p.logs.lines.get(id) ?? []).join('\n');

describe('a deployment switches only to a healthy release', () => {
  test('the first release is routed once its health check passed', async () => {
    const app = p.app('first');
    const d = p.deploy(app, p.release(app, 'a'.repeat(40)));
    await p.settle();
    assert.equal(state(d.id), 'OK');
    const [instance] = p.runtime.instancesOf(app.id);
    assert.ok(instance, 'an instance serves');
    assert.deepEqual(upstreamPorts(app.id), [instance.port]);
    // The route to the new instance appears only after the instance answered its health check.
    const checked = p.events.indexOf(`health-check ${instance.id} /`);
    const routed = p.events.findIndex((e) => e.startsWith('route') && e.includes(`:${instance.port}]`));
    assert.ok(checked >= 0 && routed > checked, p.events.join('\n'));
  });

  test('a failing health check keeps the previous release serving and fails the deployment', async () => {
    const app = p.app('unhealthy-next');
    p.vars.set(app.id, { CC_HEALTH_CHECK_PATH: '/ready' });
    p.deploy(app, p.release(app, 'b'.repeat(40)));
    await p.settle();
    const before = servingPorts(app.id);
    const broken = p.deploy(app, p.release(app, 'c'.repeat(40), { status: (path) => (path === '/ready' ? 500 : 200) }));
    await p.settle();
    assert.equal(state(broken.id), 'FAIL');
    assert.match(p.store.deployments.byId(broken.id)!.message ?? '', /^healthcheck: Health check failed/);
    assert.deepEqual(servingPorts(app.id), before, 'the same instance still serves');
    assert.deepEqual(upstreamPorts(app.id), before, 'the router still sends requests to it');
    const failed = p.backend.started.at(-1)!;
    assert.equal(failed.spec.deploymentId, broken.id);
    assert.equal(failed.state(), 'stopped', 'the unhealthy instance was stopped');
    assert.ok(!p.events.some((e) => e.startsWith('route') && e.includes(`:${failed.port}]`)), 'it was never routed');
    const log = await deploymentLog(broken.id);
    assert.match(log, /Response from GET \/ready is 500/);
    assert.match(log, /The previous release keeps serving\./);
  });

  test('an instance that cannot start fails the run phase and changes nothing', async () => {
    const app = p.app('no-start');
    p.deploy(app, p.release(app, 'd'.repeat(40)));
    await p.settle();
    const before = servingPorts(app.id);
    const broken = p.deploy(app, p.release(app, 'e'.repeat(40), { failStart: 'prestart exited with code 4' }));
    await p.settle();
    assert.equal(state(broken.id), 'FAIL');
    assert.match(p.store.deployments.byId(broken.id)!.message ?? '', /^run: The instance could not start: prestart exited with code 4/);
    assert.deepEqual(upstreamPorts(app.id), before);
  });

  test('after the switch the old instance drains: stopped only after the router left it', async () => {
    const app = p.app('drain');
    p.deploy(app, p.release(app, 'f'.repeat(40)));
    await p.settle();
    const [old] = p.runtime.instancesOf(app.id);
    p.deploy(app, p.release(app, '1'.repeat(40)));
    await p.settle();
    const [next] = p.runtime.instancesOf(app.id);
    assert.notEqual(next!.id, old!.id);
    assert.equal(old!.state(), 'stopped');
    const switched = p.events.findIndex((e) => e.startsWith('route') && e.includes(`:${next!.port}]`) && !e.includes(`:${old!.port}]`));
    const stopped = p.events.indexOf(`stop ${old!.id}`);
    assert.ok(switched >= 0 && stopped > switched, p.events.join('\n'));
  });
});

describe('the queue', () => {
  test('deployments of an app run one at a time, in the order they were queued', async () => {
    const app = p.app('queue');
    const releases = ['2', '3', '4'].map((c) => p.release(app, c.repeat(40), { bootMs: 30 }));
    const queued = releases.map((r) => p.deploy(app, r));
    assert.ok(p.deployer.busy(app.id));
    await p.settle();
    const starts = p.events.filter((e) => e.startsWith('start ') && queued.some((d) => e.endsWith(d.id))).map((e) => e.split(' ')[2]);
    assert.deepEqual(
      starts,
      queued.map((d) => d.id),
    );
    for (const d of queued) assert.equal(state(d.id), 'OK');
    assert.equal(p.runtime.instancesOf(app.id)[0]!.spec.deploymentId, queued[2]!.id, 'the last one queued serves');
    assert.equal(p.deployer.busy(app.id), false);
  });

  test('a deployment cancelled while it waits never starts', async () => {
    const app = p.app('cancel-queued');
    const first = p.deploy(app, p.release(app, '5'.repeat(40), { bootMs: 50 }));
    const second = p.deploy(app, p.release(app, '6'.repeat(40)));
    const cancelled = p.deployer.cancel(app.id, 'test', true);
    assert.deepEqual(cancelled.sort(), [first.id, second.id].sort());
    await p.settle();
    assert.equal(state(second.id), 'CANCELLED');
    assert.ok(!p.events.some((e) => e.endsWith(` ${second.id}`) && e.startsWith('start ')));
  });
});

describe('rollback and restore', () => {
  test('a rollback serves an earlier release again, health-checked, without a build', async () => {
    const app = p.app('rollback');
    const v1 = p.release(app, '7'.repeat(40));
    const v2 = p.release(app, '8'.repeat(40));
    p.deploy(app, v1);
    await p.settle();
    p.deploy(app, v2);
    await p.settle();
    const back = p.deploy(app, v1);
    await p.settle();
    assert.equal(state(back.id), 'OK');
    const [serving] = p.runtime.instancesOf(app.id);
    assert.equal(serving!.spec.deploymentId, back.id);
    assert.match(serving!.spec.releaseDir, new RegExp(`${v1.id}$`), 'the release folder of v1 serves');
    assert.equal(p.store.deployments.release(app.id)!.deployment_id, back.id);
    assert.match(await deploymentLog(back.id), /Reusing the release built for commit 7{40} \(no build\)/);
  });

  test('a restart (same commit, policy restart) starts the serving release again and switches to it once healthy', async () => {
    const app = p.app('restart');
    const built = p.release(app, 'ab'.repeat(20));
    p.deploy(app, built);
    await p.settle();
    const [before] = p.runtime.instancesOf(app.id);
    // What `slipway restart` and `deploy --same-commit-policy restart` queue: the serving release, no build.
    const restart = p.deployer.enqueue(app, { commit: built.commit_sha, cause: 'restart', userId: null, mode: 'reuse-release' });
    await p.settle();
    assert.equal(state(restart.id), 'OK');
    const [after] = p.runtime.instancesOf(app.id);
    assert.notEqual(after!.id, before!.id, 'a new instance serves');
    assert.equal(after!.spec.releaseDir, before!.spec.releaseDir, 'from the same release folder');
    assert.equal(before!.state(), 'stopped');
    assert.deepEqual(upstreamPorts(app.id), [after!.port]);
  });

  test('a restart of an app that never deployed fails, saying to deploy first', async () => {
    const app = p.app('restart-nothing');
    const restart = p.deployer.enqueue(app, { commit: 'cd'.repeat(20), cause: 'restart', userId: null, mode: 'reuse-release' });
    await p.settle();
    assert.equal(state(restart.id), 'FAIL');
    assert.match(await deploymentLog(restart.id), /This application has no built release to start\.\nHint: Deploy it first/);
  });

  test('after a daemon restart every release that should run serves again', async () => {
    const app = p.app('restore');
    p.deploy(app, p.release(app, '9'.repeat(40)));
    await p.settle();
    const stopped = p.app('restore-stopped');
    p.deploy(stopped, p.release(stopped, '0'.repeat(40)));
    await p.settle();
    await p.runtime.stop(stopped.id);
    p.store.deployments.setWanted(stopped.id, 'stopped');

    await p.runtime.shutdown();
    assert.deepEqual(p.backend.list(), [], 'the old runtime stopped everything');
    const runtime = p.restartRuntime();
    await runtime.restoreAll();
    const [restored] = runtime.instancesOf(app.id);
    assert.equal(restored?.state(), 'running');
    assert.deepEqual(upstreamPorts(app.id), [restored!.port]);
    assert.deepEqual(runtime.instancesOf(stopped.id), [], 'a stopped app stays stopped');
    assert.deepEqual(upstreamPorts(stopped.id), []);
    await runtime.shutdown();
  });
});
