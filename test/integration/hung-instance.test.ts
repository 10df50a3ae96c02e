/**
 * docs/behaviour.md, Liveness: an instance whose event loop is stuck (it still runs, it answers
 * nothing) is replaced while clients keep sending requests, out of the router at once when
 * another instance answers. The app is node-hello with a `/hang` route added that never
 * returns; liveness checks run every second here and two failures in a row are enough.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, commitAll, createApp, deploymentLog, getThroughRouter, pushAndWait, registerSshKey } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';

let daemon: TestDaemon;
let dir: string;
let appId: string;
let host: string;

interface StatusInstance {
  id: string;
  number: number;
  state: string;
  liveness?: { state: string; reason: string; at: string } | null;
}

async function instances(): Promise<StatusInstance[]> {
  const shown = await daemon.cli(['status', '--app', appId, '--format', 'json']);
  assert.equal(shown.code, 0, shown.stderr);
  return (JSON.parse(shown.stdout) as { instances: StatusInstance[] }).instances;
}

/** The app's log records (time and line), oldest first. */
async function appLog(): Promise<Array<{ time: string; line: string }>> {
  const shown = await daemon.cli(['logs', '--app', appId, '--format', 'json', '--no-follow', '-n', '2000']);
  assert.equal(shown.code, 0, shown.stderr);
  return shown.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { time?: string; line?: string })
    .filter((e): e is { time: string; line: string } => typeof e.line === 'string' && typeof e.time === 'string');
}

interface Outcome {
  started: number;
  ok: boolean;
  what: string;
}

/** Sequential GETs through the router until stopped, on one keep-alive connection or a new one each time. */
function client(keepAlive: boolean): { outcomes: Outcome[]; stop(): Promise<Outcome[]> } {
  const agent = keepAlive ? new http.Agent({ keepAlive: true, maxSockets: 1 }) : undefined;
  const outcomes: Outcome[] = [];
  let running = true;
  const get = () =>
    new Promise<Outcome>((resolve) => {
      const started = Date.now();
      const req = http.request(
        { host: '127.0.0.1', port: daemon.routerPort, path: '/', headers: { host }, agent: agent ?? false, timeout: 20_000 },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ started, ok: res.statusCode === 200, what: `status ${res.statusCode}` }));
          res.on('error', (e) => resolve({ started, ok: false, what: e.message }));
        },
      );
      req.on('timeout', () => req.destroy(new Error('no answer within 20 s')));
      req.on('error', (e) => resolve({ started, ok: false, what: e.message }));
      req.end();
    });
  const loop = (async () => {
    while (running) {
      outcomes.push(await get());
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    outcomes,
    async stop() {
      running = false;
      await loop;
      agent?.destroy();
      return outcomes;
    },
  };
}

/**
 * Sends /hang through the router: whichever instance takes it stops answering; the request
 * itself never ends. A POST, which the router never replays on another instance (a GET
 * left without an answer when the stuck instance is killed would be, and hang that one too).
 */
function hangAnInstance(): void {
  const req = http.request({ host: '127.0.0.1', port: daemon.routerPort, method: 'POST', path: '/hang', headers: { host }, agent: false });
  req.on('error', () => undefined);
  req.end();
  setTimeout(() => req.destroy(), 2000).unref();
}

before(async () => {
  daemon = await startDaemon();
  const { gitEnv } = await registerSshKey(daemon);
  dir = checkoutExample('node-hello');
  const server = join(dir, 'server.js');
  const source = readFileSync(server, 'utf8');
  const crashRoute = "  if (req.url === '/crash') {";
  assert.ok(source.includes(crashRoute), 'node-hello still has its /crash route to put /hang beside');
  writeFileSync(server, source.replace(crashRoute, "  if (req.url === '/hang') {\n    while (true) {}\n  }\n" + crashRoute));
  commitAll(dir, 'a route that hangs the event loop');
  appId = await createApp(daemon, dir, 'hangs');
  host = `${appId}.localhost`;
  for (const [name, value] of [
    ['SLIPWAY_LIVENESS_INTERVAL', '1'],
    ['SLIPWAY_LIVENESS_TIMEOUT', '1'],
    ['SLIPWAY_LIVENESS_FAILURES', '2'],
  ]) {
    const set = await daemon.cli(['env', 'set', name!, value!], { cwd: dir });
    assert.equal(set.code, 0, set.stderr);
  }
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
});

after(async () => {
  await daemon?.stop();
});

test('a malformed liveness setting is refused by env set, saying what is accepted', async () => {
  const bad = await daemon.cli(['env', 'set', 'SLIPWAY_LIVENESS_FAILURES', 'many'], { cwd: dir });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /SLIPWAY_LIVENESS_FAILURES is a whole number of checks from 1 to 100, not "many"; nothing was changed/);
  assert.match(bad.stderr, /slipway env set SLIPWAY_LIVENESS_FAILURES 3/);
});

test('with two instances, a hung one is replaced and no request fails once it is out of the router', async () => {
  const scaled = await daemon.cli(['scale', '--instances', '2'], { cwd: dir });
  assert.equal(scaled.code, 0, scaled.stderr);
  const before = await waitUntil('two running instances', async () => {
    const now = await instances();
    return now.length === 2 && now.every((i) => i.state === 'running') ? now : undefined;
  });
  const keepAlive = client(true);
  const fresh = client(false);
  // Positive control: both clients get answers before anything hangs.
  await waitUntil('answers to both clients', async () =>
    keepAlive.outcomes.filter((o) => o.ok).length >= 20 && fresh.outcomes.filter((o) => o.ok).length >= 20 ? true : undefined,
  );
  const hungAt = Date.now();
  hangAnInstance();

  const replaced = await waitUntil(
    'the hung instance to be replaced',
    async () =>
      (await appLog()).find((e) =>
        /^Instance \d replaced after failing its liveness check \(did not answer GET \/ for \d+ s\); next replacement not before 5 s$/.test(
          e.line,
        ),
      ),
    60_000,
  );
  const number = Number(/^Instance (\d)/.exec(replaced.line)![1]);
  // The clients go on a while with the replacement serving.
  const replacedAt = Date.now();
  await waitUntil('more answers after the replacement', async () =>
    keepAlive.outcomes.filter((o) => o.started > replacedAt && o.ok).length >= 20 &&
    fresh.outcomes.filter((o) => o.started > replacedAt && o.ok).length >= 20
      ? true
      : undefined,
  );
  const outcomes = [...(await keepAlive.stop()), ...(await fresh.stop())];

  const log = await appLog();
  const withdrawn = log.find(
    (e) => e.line.startsWith(`Instance ${number} did not answer GET / for`) && e.line.includes('taken out of the router'),
  );
  assert.ok(withdrawn, log.map((e) => e.line).join('\n'));
  assert.ok(
    log.some((e) => e.line === `Liveness: instance ${number} did not answer GET / within 1 s (1 of 2 failed checks in a row)`),
    log.map((e) => e.line).join('\n'),
  );
  // The detection window ends when the instance leaves the router (and the router applied it: 1 s more).
  const windowEnd = Date.parse(withdrawn.time) + 1000;
  assert.ok(windowEnd - hungAt < 15_000, `detected within ${windowEnd - hungAt} ms`);
  const failed = outcomes.filter((o) => !o.ok);
  assert.deepEqual(
    failed.filter((o) => o.started < hungAt || o.started > windowEnd).map((o) => `${o.what} at +${o.started - hungAt} ms`),
    [],
    'no request fails outside the detection window',
  );
  assert.ok(outcomes.filter((o) => o.ok && o.started > windowEnd).length >= 40, 'requests went on after the window');

  const after = await instances();
  assert.deepEqual(after.map((i) => i.number).sort(), [0, 1]);
  const replacement = after.find((i) => i.number === number)!;
  assert.notEqual(replacement.id, before.find((i) => i.number === number)!.id, 'a new instance holds the number');
  assert.equal(after.find((i) => i.number !== number)!.id, before.find((i) => i.number !== number)!.id, 'the other instance stays');
  assert.equal(replacement.liveness?.state, 'replaced');
  assert.match(replacement.liveness!.reason, /^did not answer GET \/ for \d+ s$/);
  const human = await daemon.cli(['status', '--app', appId]);
  assert.match(
    human.stdout,
    new RegExp(`^instance ${number}\\s+running, .*; replaced at \\S+ an instance that did not answer GET / for \\d+ s$`, 'm'),
  );

  const activity = JSON.parse((await daemon.cli(['activity', '--app', appId, '--format', 'json'])).stdout) as Array<{
    cause: string;
    state: string;
    message: string | null;
  }>;
  const entry = activity.find((d) => d.cause === `instance ${number} stopped answering`);
  assert.equal(entry?.state, 'OK', JSON.stringify(activity));
  assert.match(entry!.message!, /^Instance \d replaced after failing its liveness check .*; next replacement not before 5 s$/);

  const metrics = await fetch(`${daemon.apiUrl}/metrics`, { headers: { authorization: `Bearer ${daemon.adminToken}` } });
  assert.match(await metrics.text(), new RegExp(`^slipway_instance_replacements_total\\{app="${appId}"\\} 1$`, 'm'));
});

test('with one instance, a hung one is replaced and the app answers again within 30 s', async () => {
  const scaled = await daemon.cli(['scale', '--instances', '1'], { cwd: dir });
  assert.equal(scaled.code, 0, scaled.stderr);
  const [only] = await waitUntil('one running instance', async () => {
    const now = await instances();
    return now.length === 1 && now[0]!.state === 'running' ? now : undefined;
  });
  assert.equal((await getThroughRouter(daemon, host)).status, 200);
  const hungAt = Date.now();
  hangAnInstance();
  // Positive control: the app stops answering at all (the hang took).
  await waitUntil('the app to stop answering', async () => {
    const r = await getThroughRouter(daemon, host, '/', {}, 1000).catch(() => undefined);
    return r?.status === 200 ? undefined : true;
  });
  const backAt = await waitUntil(
    'the app to answer from a new instance',
    async () => {
      const r = await getThroughRouter(daemon, host, '/', {}, 2000).catch(() => undefined);
      if (r?.status !== 200) return undefined;
      return (JSON.parse(r.body) as { instanceId: string }).instanceId !== only!.id ? Date.now() : undefined;
    },
    60_000,
  );
  assert.ok(backAt - hungAt < 30_000, `back after ${backAt - hungAt} ms`);
  const [now] = await waitUntil('status to say so', async () => {
    const shown = await instances();
    return shown.length === 1 && shown[0]!.liveness?.state === 'replaced' ? shown : undefined;
  });
  assert.equal(now!.number, 0);
  assert.notEqual(now!.id, only!.id);
});

test('an instance adopted by a restarted daemon is checked with the settings it was deployed with, and replaced when it hangs', async () => {
  // Right after the previous test's replacement: the stuck instance (same number, same release)
  // may still be in its SIGTERM grace, and must not be what the next daemon adopts.
  const [running] = await instances();
  assert.equal(await daemon.terminate(), 0);
  await daemon.restart();
  // Adopted, not started again: the same instance answers.
  const adopted = await waitUntil('the adopted instance to answer', async () => {
    const r = await getThroughRouter(daemon, host, '/', {}, 2000).catch(() => undefined);
    if (r?.status !== 200) return undefined;
    return (JSON.parse(r.body) as { instanceId: string }).instanceId;
  });
  assert.equal(adopted, running!.id, 'the daemon adopted the running instance');
  const hungAt = Date.now();
  hangAnInstance();
  const [now] = await waitUntil(
    'the adopted instance to be replaced',
    async () => {
      const shown = await instances();
      return shown.length === 1 && shown[0]!.id !== adopted && shown[0]!.liveness?.state === 'replaced' ? shown : undefined;
    },
    60_000,
  );
  assert.equal(now!.number, 0);
  assert.ok(Date.now() - hungAt < 30_000, `replaced after ${Date.now() - hungAt} ms (1 s checks, as deployed)`);
  assert.equal((await getThroughRouter(daemon, host)).status, 200);
});
