/**
 * The liveness monitor on AppRuntime with the fake instance backend and the fake router (no
 * root): an instance that stops answering 200 leaves the router and is replaced, a replacement
 * that fails is tried again, an app that opts out is never checked, a malformed setting fails
 * the deployment. Checks run every 0.5 s here, the shortest interval allowed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { FAKE_DOMAIN, type FakePlatform, fakePlatform } from '../../test/support/fakes/fake-platform.js';
import type { FakeInstance } from '../../test/support/fakes/fake-instance-backend.js';
import type { AppRow } from '../store/apps.js';
import { waitUntil } from '../../test/support/wait.js';

let p: FakePlatform;
const replaced: string[] = [];
before(async () => {
  p = await fakePlatform();
  // As a daemon does at start: the runtime owns the router's table from then on.
  await p.runtime.restoreAll();
  // The back-off between replacements of a number, scaled down from 5 s to 60 s.
  p.runtime.startLivenessMonitor({
    tickMs: 20,
    onReplaced: (appId) => replaced.push(appId),
    replacementBackoff: { initialMs: 300, maxMs: 1200, resetAfterMs: 60_000 },
  });
});
after(async () => {
  await p.runtime.stopLivenessMonitor();
  await p.close();
});

const FAST = { SLIPWAY_LIVENESS_INTERVAL: '0.5', SLIPWAY_LIVENESS_TIMEOUT: '0.3', SLIPWAY_LIVENESS_FAILURES: '2' };

const upstreamPorts = (appId: string) => (p.router.upstreamsOf(`${appId}.${FAKE_DOMAIN}`) ?? []).map((u) => u.port).sort();
const appLog = (appId: string) => p.logs.lines.get(appId) ?? [];
const livenessChecksOf = (instance: FakeInstance) => p.events.filter((e) => e === `health-check ${instance.id} /`).length - 1; // the first is the deployment's

/** An app of `count` instances whose instances answer 503 once their id is in `sick`. */
async function deployed(name: string, count: number, vars: Record<string, string>, sick: Set<string>): Promise<AppRow> {
  const app = p.app(name);
  p.vars.set(app.id, vars);
  p.store.apps.setInstances(app.id, count);
  p.deploy(app, p.release(app, 'a'.repeat(40), { status: (_path, spec) => (sick.has(spec.instanceId) || sick.has('*') ? 503 : 200) }));
  await p.settle();
  assert.equal(p.runtime.instancesOf(app.id).length, count);
  return app;
}

test('an instance that stops answering 200 leaves the router at once and is replaced by one of the same number and release', async () => {
  const sick = new Set<string>();
  const app = await deployed('liveness-two', 2, FAST, sick);
  const [healthy, stuck] = p.runtime.instancesOf(app.id) as FakeInstance[];
  // Positive control: the monitor checks a healthy instance, which stays.
  await waitUntil('a few liveness checks', () => livenessChecksOf(stuck!) >= 2, 8000);

  sick.add(stuck!.id);
  await waitUntil('the stuck instance to leave the router', () => !upstreamPorts(app.id).includes(stuck!.port), 8000);
  assert.ok(upstreamPorts(app.id).includes(healthy!.port), 'the healthy instance keeps serving meanwhile');
  await waitUntil('the replacement', () => stuck!.state() === 'stopped' && upstreamPorts(app.id).length === 2, 8000);

  const [first, fresh] = p.runtime.instancesOf(app.id);
  assert.equal(first, healthy);
  assert.notEqual(fresh, stuck);
  assert.equal(fresh!.spec.instanceNumber, 1);
  assert.equal(fresh!.spec.deploymentId, stuck!.spec.deploymentId, 'the same release');
  assert.deepEqual(upstreamPorts(app.id), [healthy!.port, fresh!.port].sort());
  assert.ok(
    p.events.indexOf(`health-check ${fresh!.id} /`) < p.events.indexOf(`stop ${stuck!.id}`),
    'the new instance passed its health check before the stuck one was stopped',
  );

  assert.ok(
    appLog(app.id).includes('Liveness: instance 1 answered GET / with 503 (1 of 2 failed checks in a row)'),
    appLog(app.id).join('\n'),
  );
  assert.ok(
    appLog(app.id).some((l) =>
      /^Instance 1 replaced after failing its liveness check \(answered GET \/ with 503 for \d+ s\); next replacement not before 1 s$/.test(
        l,
      ),
    ),
    appLog(app.id).join('\n'),
  );
  const [activity] = p.store.deployments.listForApp(app.id, 1);
  assert.equal(activity!.cause, 'instance 1 stopped answering');
  assert.equal(activity!.state, 'OK');
  assert.match(activity!.message!, /^Instance 1 replaced after failing its liveness check \(answered GET \/ with 503 for \d+ s\)/);
  assert.deepEqual(replaced, [app.id]);
  assert.equal(p.runtime.livenessOf(fresh!)?.state, 'replaced');
  assert.match(p.runtime.livenessOf(fresh!)!.reason, /^answered GET \/ with 503 for \d+ s$/);
  assert.equal(p.runtime.livenessOf(healthy!), undefined);
});

test('a replacement that fails its health check is tried again after the back-off; a last instance stays in the router meanwhile', async () => {
  const sick = new Set<string>();
  const app = await deployed('liveness-retry', 1, FAST, sick);
  const [stuck] = p.runtime.instancesOf(app.id) as FakeInstance[];
  sick.add('*');
  await waitUntil('a failed replacement', () => appLog(app.id).some((l) => l.startsWith('The replacement of instance 0 failed')), 8000);
  assert.ok(
    appLog(app.id).some((l) => /^Instance 0 answered GET \/ with 503 for \d+ s: a replacement starts .*no other instance answers/.test(l)),
    appLog(app.id).join('\n'),
  );
  assert.equal(stuck!.state(), 'running', 'the stuck instance is stopped only once replaced');
  assert.deepEqual(upstreamPorts(app.id), [stuck!.port], 'with no other instance answering, taking it out would help no client');
  const [activity] = p.store.deployments.listForApp(app.id, 1);
  assert.equal(activity!.state, 'WIP', 'the replacement is in progress');

  sick.clear();
  await waitUntil('the second try to serve', () => upstreamPorts(app.id).length === 1 && upstreamPorts(app.id)[0] !== stuck!.port, 8000);
  const [fresh] = p.runtime.instancesOf(app.id);
  assert.equal(fresh!.spec.instanceNumber, 0);
  await waitUntil('the stuck instance to stop', () => stuck!.state() === 'stopped', 8000);
  const started = p.backend.started.filter((i) => i.spec.appId === app.id);
  assert.equal(started.length, 3, 'the deployed instance, a failed replacement, the one that serves');
  assert.equal(started[1]!.state(), 'stopped', 'the failed replacement was stopped');
  assert.equal(p.store.deployments.byId(activity!.id)!.state, 'OK');
});

test('when every instance fails its checks (a checked dependency is down), none leaves the router', async () => {
  const sick = new Set<string>();
  const app = await deployed('liveness-all-failing', 2, FAST, sick);
  const both = p.runtime.instancesOf(app.id) as FakeInstance[];
  sick.add('*');
  await waitUntil(
    'both replacements to fail once',
    () => [0, 1].every((n) => appLog(app.id).some((l) => l.startsWith(`The replacement of instance ${n} failed`))),
    8000,
  );
  assert.deepEqual(upstreamPorts(app.id), both.map((i) => i.port).sort());
  sick.clear();
  await waitUntil('both to be replaced', () => both.every((i) => i.state() === 'stopped') && upstreamPorts(app.id).length === 2, 8000);
});

test('an app with SLIPWAY_LIVENESS=off is not checked once it serves', async () => {
  const sick = new Set<string>();
  const off = await deployed('liveness-off', 1, { ...FAST, SLIPWAY_LIVENESS: 'off' }, sick);
  const on = await deployed('liveness-on', 1, FAST, new Set());
  const [quiet] = p.runtime.instancesOf(off.id) as FakeInstance[];
  const [checked] = p.runtime.instancesOf(on.id) as FakeInstance[];
  // Counted from now: its deployment may have needed more than one check on a busy machine.
  const checksOf = (instance: FakeInstance) => p.events.filter((e) => e === `health-check ${instance.id} /`).length;
  const quietChecksWhenServing = checksOf(quiet!);
  const checkedBefore = checksOf(checked!);
  sick.add(quiet!.id);
  // Positive control: in the same time the other app's instance is checked twice.
  await waitUntil('two checks of the app that did not opt out', () => checksOf(checked!) >= checkedBefore + 2, 8000);
  assert.equal(checksOf(quiet!), quietChecksWhenServing, 'no liveness check of the app that opted out');
  assert.deepEqual(upstreamPorts(off.id), [quiet!.port]);
});

test('after a crash restart, failed checks do not count while the instance boots (until it answered once)', async () => {
  const sick = new Set<string>();
  const app = await deployed('liveness-crash', 1, FAST, sick);
  const [instance] = p.runtime.instancesOf(app.id) as FakeInstance[];
  sick.add(instance!.id);
  instance!.crash(20);
  await waitUntil('the restart', () => instance!.restarts() === 1 && instance!.state() === 'running', 8000);
  const checksBefore = livenessChecksOf(instance!);
  // Positive control: it is checked (and fails) more times than the failures allowed.
  await waitUntil('three more checks', () => livenessChecksOf(instance!) >= checksBefore + 3, 8000);
  assert.deepEqual(upstreamPorts(app.id), [instance!.port]);
  assert.equal(p.store.deployments.listForApp(app.id, 1)[0]!.cause, 'test');
  assert.ok(!appLog(app.id).some((l) => l.startsWith('Liveness: instance 0')), 'no failure counted');

  // Once it answered, failures count again.
  sick.clear();
  await waitUntil('a good check', () => livenessChecksOf(instance!) >= checksBefore + 5, 8000);
  sick.add(instance!.id);
  await waitUntil('the replacement', () => instance!.state() === 'stopped' && upstreamPorts(app.id).length === 1, 8000);
});

test('an instance that leaves service while it is being replaced ends the replacement as cancelled', async () => {
  const sick = new Set<string>();
  const app = await deployed('liveness-stopped', 1, FAST, sick);
  sick.add('*');
  await waitUntil('a failed replacement', () => appLog(app.id).some((l) => l.startsWith('The replacement of instance 0 failed')), 8000);
  await p.runtime.stop(app.id);
  const [activity] = p.store.deployments.listForApp(app.id, 1);
  await waitUntil('the replacement to end', () => p.store.deployments.byId(activity!.id)!.state !== 'WIP', 8000);
  assert.equal(p.store.deployments.byId(activity!.id)!.state, 'CANCELLED');
  assert.match(p.store.deployments.byId(activity!.id)!.message!, /left service before a replacement was ready/);
});

test('a malformed liveness setting fails the deployment in the health check phase, naming the variable', async () => {
  const app = p.app('liveness-malformed');
  p.vars.set(app.id, { SLIPWAY_LIVENESS_INTERVAL: '10s' });
  const deployment = p.deploy(app, p.release(app, 'b'.repeat(40)));
  await p.settle();
  const row = p.store.deployments.byId(deployment.id)!;
  assert.equal(row.state, 'FAIL');
  assert.equal(row.phase, 'healthcheck');
  assert.match(row.message!, /SLIPWAY_LIVENESS_INTERVAL is a number of seconds from 0\.5 to 3600, not "10s"/);
});

test('an instance that passes its health check and then fails its checks is replaced ever more slowly, and the activity says when next', async () => {
  // Each instance answers 200 to its first request (the health check before it serves), 503 after.
  const asked = new Map<string, number>();
  /** When each instance was first asked: its health check, right after it started. */
  const firstAsked: number[] = [];
  const app = p.app('liveness-flapping');
  p.vars.set(app.id, { ...FAST, SLIPWAY_LIVENESS_FAILURES: '1' });
  p.deploy(
    app,
    p.release(app, 'c'.repeat(40), {
      status: (_path, spec) => {
        const n = (asked.get(spec.instanceId) ?? 0) + 1;
        asked.set(spec.instanceId, n);
        if (n === 1) firstAsked.push(Date.now());
        return n === 1 ? 200 : 503;
      },
    }),
  );
  await p.settle();
  const replacedAt = () =>
    p.store.deployments
      .listForApp(app.id, 100)
      .filter((d) => d.cause === 'instance 0 stopped answering' && d.state === 'OK')
      .map((d) => d);
  await waitUntil('four replacements', () => replacedAt().length >= 4, 15_000);
  const messages = replacedAt()
    .reverse()
    .map((d) => d.message!);
  // 0.3 s, 0.6 s, 1.2 s, then 1.2 s again: whole seconds, at least 1, in the message.
  assert.deepEqual(
    messages.slice(0, 4).map((m) => /next replacement not before (\d+) s$/.exec(m)?.[1]),
    ['1', '1', '1', '1'],
    messages.join('\n'),
  );
  // The waits themselves: each replacement's try began no sooner than the back-off after the last.
  const tries = appLog(app.id)
    .filter((l) => /^Instance 0 answered GET \/ with 503 for \d+ s: a replacement starts/.test(l))
    .slice(2, 4);
  assert.ok(
    tries.every((l) => /starts in \d+ s \(back-off: instance 0 was replaced a moment ago\)/.test(l)),
    appLog(app.id).join('\n'),
  );
  const gaps = firstAsked.slice(2, 5).map((t, k) => t - firstAsked[k + 1]!);
  // Without the back-off an instance that fails its first check is replaced every ~0.5 s.
  assert.ok(gaps[0]! >= 250 && gaps[1]! >= 550 && gaps[2]! >= 1100, `gaps between replacements: ${gaps.join(', ')} ms`);
  await p.runtime.stop(app.id);
});
