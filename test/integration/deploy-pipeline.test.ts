import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import {
  checkoutExample,
  createApp,
  deploymentLog,
  getThroughRouter,
  gitPush,
  newRelease,
  pushAndWait,
  registerSshKey,
  commitAll,
  waitForDeploymentOf,
} from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';

let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let dir: string;
let appId: string;
let host: string;

const json = (body: string) => JSON.parse(body) as Record<string, unknown>;

before(async () => {
  daemon = await startDaemon();
  ({ gitEnv } = await registerSshKey(daemon));
  dir = checkoutExample('node-hello');
  newRelease(dir, 'one');
  appId = await createApp(daemon, dir, 'hello', { GREETING: 'bonjour' });
  host = `${appId}.localhost`;
});

after(async () => {
  await daemon?.stop();
});

test('git push over SSH deploys the app, which answers through the router with its variables', async () => {
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
  assert.match(result.push, new RegExp(`remote: slipway: deployment ${result.id} queued`));
  assert.match(result.push, /slipway logs --app .* --deployment-id/);

  const response = await getThroughRouter(daemon, host, '/', { 'x-forwarded-for': '203.0.113.9' });
  assert.equal(response.status, 200);
  const facts = json(response.body);
  assert.equal(facts.release, 'one');
  assert.equal(facts.greeting, 'bonjour');
  assert.equal(facts.appId, appId);
  assert.equal(facts.commitId, result.commit);
  assert.equal(facts.deploymentId, result.id);
  assert.equal(facts.instanceType, 'production');
  assert.equal(facts.port, '8080');
  assert.notEqual(facts.uid, 0, 'the app runs unprivileged');
  assert.equal(facts.forwardedProto, 'http');
  assert.equal(facts.forwardedHost, host);
  // This client is no trusted proxy: its X-Forwarded-For is replaced, so it cannot pass for another address.
  assert.equal(facts.forwardedFor, '127.0.0.1');

  const log = await deploymentLog(daemon, appId, result.id);
  assert.ok(
    log.some((l) => l.includes('Build plan (node)')),
    'the plan is printed',
  );
  assert.ok(log.includes('Response from GET / is 200'));
  assert.ok(log.some((l) => /^Successfully deployed in /.test(l)));
});

test("slipway plan prints, for the folder's commit and without deploying, the plan the deploy log printed", async () => {
  let deployments = JSON.parse((await daemon.cli(['activity', '--app', appId, '--format', 'json'])).stdout) as Array<{
    id: string;
    state: string;
  }>;
  if (!deployments.some((d) => d.state === 'OK')) {
    // Run alone (--test-name-pattern), this test deploys the app itself.
    await pushAndWait(daemon, dir, appId, gitEnv);
    deployments = JSON.parse((await daemon.cli(['activity', '--app', appId, '--format', 'json'])).stdout);
  }
  const deployed = deployments.find((d) => d.state === 'OK');
  assert.ok(deployed, 'the app has an OK deployment');
  const printed = await daemon.cli(['plan', '--app', appId], { cwd: dir });
  assert.equal(printed.code, 0, printed.stderr);
  const lines = printed.stdout.trimEnd().split('\n');
  assert.equal(lines[0], 'Build plan (node)');
  // The start command in the user's words and where it was written, not slipway's bash wrapper.
  assert.ok(lines.includes('  Start: node server.js  (scripts.start in package.json)'), printed.stdout);
  // Real paths, not tokens: where the build's Node.js is in the toolchain cache.
  assert.doesNotMatch(printed.stdout, /\$\{SLIPWAY_/);
  assert.match(printed.stdout, /- node \d+\.\d+\.\d+ runs from \/\S+\/node\/\d+\.\d+\.\d+\/bin\.$/m);
  const log = await deploymentLog(daemon, appId, deployed.id);
  const start = log.indexOf(`    ${lines[0]}`);
  assert.ok(start >= 0, log.join('\n'));
  assert.deepEqual(
    log.slice(start, start + lines.length),
    lines.map((l) => `    ${l}`),
    'the deploy log printed the same plan',
  );

  const data = JSON.parse((await daemon.cli(['plan', '--app', appId, '--format', 'json'], { cwd: dir })).stdout);
  assert.equal(data.plan.provider, 'node');
  assert.ok(data.plan.toolchain.some((t: { name: string }) => t.name === 'node'));
  // The data keeps the exact argv that runs, beside the user's words.
  assert.deepEqual(data.plan.start.written, { command: 'node server.js', source: 'scripts.start in package.json' });
  assert.equal(data.plan.start.argv[0], 'bash');
  assert.ok(data.plan.start.argv.includes('node server.js'), data.plan.start.argv.join(' '));
  assert.match(data.commit, /^[0-9a-f]{40}$/);
  const after = JSON.parse((await daemon.cli(['activity', '--app', appId, '--format', 'json'])).stdout);
  assert.equal(after.length, deployments.length, 'planning deployed nothing');

  const unknown = await daemon.cli(['plan', '--app', appId, '--commit', 'abcdef12'], { cwd: dir });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /No commit abcdef12 was pushed to this application/);
});

test('a push to another branch is refused with a message saying only master deploys', async () => {
  const before = JSON.parse((await daemon.cli(['activity', '--app', appId, '--format', 'json'])).stdout).length;
  const push = await gitPush(dir, `git+ssh://git@127.0.0.1:${daemon.sshPort}/${appId}.git`, gitEnv, 'master:refs/heads/feature');
  assert.notEqual(push.code, 0);
  assert.match(push.output, /only the master branch deploys/);
  assert.match(push.output, /feature:master/);
  const after = JSON.parse((await daemon.cli(['activity', '--app', appId, '--format', 'json'])).stdout).length;
  assert.equal(after, before, 'nothing was deployed');
});

test('an app created but never deployed answers 503 through the router', async () => {
  const other = checkoutExample('node-hello');
  const id = await createApp(daemon, other, 'not-yet-deployed');
  const response = await getThroughRouter(daemon, `${id}.localhost`);
  assert.equal(response.status, 503);
  assert.match(response.body, /no running instance/i);
});

test('unknown hosts get a 404 page', async () => {
  const response = await getThroughRouter(daemon, 'app_00000000-0000-0000-0000-000000000000.localhost');
  assert.equal(response.status, 404);
  assert.match(response.body, /no such app/i);
});

test('an HTTP upgrade passes through the router to the app', async () => {
  const socket = connect(daemon.routerPort, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (d) => (received += d));
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(`GET /echo HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n`);
  await waitUntil('101', async () => (received.includes('101 Switching Protocols') ? true : undefined), 10_000);
  socket.write('ping-through-router');
  await waitUntil('echo', async () => (received.includes('ping-through-router') ? true : undefined), 10_000);
  socket.destroy();
});

test('a failing health check fails the deployment with the exact log lines and keeps the previous release serving', async (t) => {
  // Whatever happens here, the next tests deploy without these paths.
  t.after(async () => {
    await daemon.cli(['env', 'rm', 'CC_HEALTH_CHECK_PATH_1'], { cwd: dir });
    await daemon.cli(['env', 'rm', 'CC_HEALTH_CHECK_PATH_0'], { cwd: dir });
  });
  for (const [k, v] of [
    ['CC_HEALTH_CHECK_PATH_0', '/'],
    ['CC_HEALTH_CHECK_PATH_1', '/missing'],
  ]) {
    assert.equal((await daemon.cli(['env', 'set', k!, v!], { cwd: dir })).code, 0);
  }
  newRelease(dir, 'two-broken');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'FAIL');
  // The app's own lines come through its monitor's output file and may fall between the
  // health check's: only the health check's lines are checked for their order.
  const log = (await deploymentLog(daemon, appId, result.id)).filter((line) => !line.startsWith('release '));
  const at = log.indexOf('Response from GET / is 200');
  assert.ok(at >= 0, log.join('\n'));
  assert.deepEqual(log.slice(at, at + 4), [
    'Response from GET / is 200',
    'Response from GET /missing is 404',
    'Health check failed:',
    '- GET /missing returned 404.',
  ]);
  assert.match(log[at + 4]!, /Update the health check configuration/);
  assert.ok(
    log.some((l) => l.startsWith('==> [healthcheck]')),
    'the failing phase is named',
  );
  assert.ok(log.includes('The previous release keeps serving.'));

  const response = await getThroughRouter(daemon, host);
  assert.equal(response.status, 200);
  assert.equal(json(response.body).release, 'one');
});

test('a crashed instance is restarted automatically and the restart is logged', async () => {
  await getThroughRouter(daemon, host, '/crash');
  // The app exits just after answering: wait for the restart itself, then for it to answer.
  await waitUntil('the restart', async () => {
    const status = JSON.parse((await daemon.cli(['status', '--app', appId, '--format', 'json'])).stdout);
    return status.instance?.restarts >= 1 ? status : undefined;
  });
  await waitUntil('the app to answer again', async () => {
    const r = await getThroughRouter(daemon, host);
    return r.status === 200 ? r : undefined;
  });
  const logs = await daemon.cli(['logs', '--app', appId]);
  assert.match(logs.stdout, /crashing on purpose/);
  assert.match(logs.stdout, /restarting in [\d.]+ s \(restart #1\)/);
});

test('a redeploy under steady load fails no request and switches to the new release', async () => {
  newRelease(dir, 'three');
  const commit = commitAll(dir, 'three, again');
  let running = true;
  let ok = 0;
  const failures: string[] = [];
  const seen = new Set<string>();
  const loop = async () => {
    while (running) {
      try {
        const r = await getThroughRouter(daemon, host);
        if (r.status === 200) {
          ok++;
          seen.add(String(json(r.body).release));
        } else failures.push(`status ${r.status}`);
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
  };
  const clients = [loop(), loop(), loop(), loop()];
  const push = await gitPush(dir, `git+ssh://git@127.0.0.1:${daemon.sshPort}/${appId}.git`, gitEnv);
  assert.equal(push.code, 0, push.output);
  const deployment = await waitForDeploymentOf(daemon, appId, commit);
  await new Promise((r) => setTimeout(r, 3000));
  running = false;
  await Promise.all(clients);
  assert.equal(deployment.state, 'OK');
  assert.deepEqual(failures, []);
  assert.ok(ok > 20, `only ${ok} requests went through`);
  assert.ok(seen.has('one') && seen.has('three'), `releases seen: ${[...seen].join(', ')}`);
  assert.equal(json((await getThroughRouter(daemon, host)).body).release, 'three');
});

test('deploy --same-commit-policy: error refuses, restart starts the release again', async () => {
  const again = await daemon.cli(['deploy'], { cwd: dir, env: gitEnv });
  assert.equal(again.code, 1);
  assert.match(again.stderr, /already pushed/);
  assert.match(again.stderr, /--same-commit-policy restart/);
  const restart = await daemon.cli(['deploy', '--same-commit-policy', 'restart'], { cwd: dir, env: gitEnv });
  assert.equal(restart.code, 0, restart.stderr);
  assert.match(restart.stdout, new RegExp(host.replace(/\./g, '\\.')));
});

test('slipway deploy pushes HEAD, follows the log and exits 0 on OK', async () => {
  newRelease(dir, 'four');
  const result = await daemon.cli(['deploy'], { cwd: dir, env: gitEnv });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, /Added git remote slipway/);
  assert.match(result.stderr, /Response from GET \/ is 200/);
  assert.equal(json((await getThroughRouter(daemon, host)).body).release, 'four');
});

test('pushes during a deployment are queued: each runs after the previous one ended', async () => {
  const url = `git+ssh://git@127.0.0.1:${daemon.sshPort}/${appId}.git`;
  const first = newRelease(dir, 'queued-a');
  assert.equal((await gitPush(dir, url, gitEnv)).code, 0);
  const second = newRelease(dir, 'queued-b');
  assert.equal((await gitPush(dir, url, gitEnv)).code, 0);
  const a = await waitForDeploymentOf(daemon, appId, first);
  const b = await waitForDeploymentOf(daemon, appId, second);
  assert.equal(a.state, 'OK');
  assert.equal(b.state, 'OK');
  const list = JSON.parse((await daemon.cli(['activity', '--app', appId, '--format', 'json'])).stdout) as Array<{
    id: string;
    finished_at: string;
  }>;
  const finishedA = list.find((d) => d.id === a.id)!.finished_at;
  const logB = await daemon.cli(['logs', '--app', appId, '--deployment-id', b.id, '--format', 'json']);
  const firstLineB = JSON.parse(logB.stdout.split('\n')[0]!) as { time: string };
  assert.ok(firstLineB.time >= finishedA, `B started at ${firstLineB.time}, before A finished at ${finishedA}`);
  assert.equal(json((await getThroughRouter(daemon, host)).body).release, 'queued-b');
  newRelease(dir, 'four');
  assert.equal((await daemon.cli(['deploy'], { cwd: dir, env: gitEnv })).code, 0);
});

test('stop answers 503; the daemon restart serves the last OK release again without a rebuild', async () => {
  const deploymentsBefore = JSON.parse((await daemon.cli(['activity', '--app', appId, '--format', 'json', '--limit', '50'])).stdout).length;
  assert.equal(await daemon.stop(), 0);
  await daemon.restart();
  const response = await waitUntil('the restored app', async () => {
    const r = await getThroughRouter(daemon, host);
    return r.status === 200 ? r : undefined;
  });
  assert.equal(json(response.body).release, 'four');
  const deploymentsAfter = JSON.parse((await daemon.cli(['activity', '--app', appId, '--format', 'json', '--limit', '50'])).stdout).length;
  assert.equal(deploymentsAfter, deploymentsBefore, 'no new deployment (no rebuild) was needed');

  assert.equal((await daemon.cli(['stop', '--app', appId])).code, 0);
  const stopped = await getThroughRouter(daemon, host);
  assert.equal(stopped.status, 503);
  assert.match(stopped.body, /no running instance/i);
  const logs = await daemon.cli(['logs', '--app', appId]);
  assert.match(logs.stdout, /received SIGTERM, closing/, 'the app got SIGTERM and its last words are in its logs');
});
