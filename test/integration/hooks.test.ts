import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutFixture, createApp, deploymentLog, getThroughRouter, newRelease, pushAndWait, registerSshKey } from '../support/deploy.js';

let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let dir: string;
let appId: string;
/** The deployment of the first test: its release kept what its pre-run hook wrote. */
let hooked: string;

async function setEnv(vars: Record<string, string>): Promise<void> {
  for (const [k, v] of Object.entries(vars)) {
    const r = await daemon.cli(['env', 'set', k, v, '--app', appId]);
    assert.equal(r.code, 0, r.stderr);
  }
}

/** What an instance reads in its folder (test/fixtures/pre-run-files). */
interface Seen {
  release: string;
  preRun: string | null;
  hookRuns: string | null;
  own: string | null;
  instanceId: string;
}

async function seen(): Promise<Seen> {
  const response = await getThroughRouter(daemon, `${appId}.localhost`);
  assert.equal(response.status, 200);
  return JSON.parse(response.body) as Seen;
}

async function served(): Promise<string> {
  return (await seen()).release;
}

/** What each of `count` instances reads, by instance id (the router spreads fresh connections over them). */
async function everyInstance(count: number): Promise<Map<string, Seen>> {
  const found = new Map<string, Seen>();
  for (let i = 0; i < 60 && found.size < count; i++) {
    const s = await seen();
    found.set(s.instanceId, s);
  }
  assert.equal(found.size, count, `answers from ${count} instances`);
  return found;
}

/** Writes the id of the deployment it ran for into the app folder, and counts its runs there. */
const CAPTURED_HOOK =
  'echo "hook:pre-run greeting=$GREETING type=$INSTANCE_TYPE"; echo "$CC_DEPLOYMENT_ID" > pre-run.txt; echo ran >> hook-runs.txt';

before(async () => {
  daemon = await startDaemon();
  ({ gitEnv } = await registerSshKey(daemon));
  dir = checkoutFixture('pre-run-files');
  appId = await createApp(daemon, dir, 'hooks', { GREETING: 'hola' });
});

after(async () => {
  await daemon?.stop();
});

test('every hook runs in its phase, in order, with the app environment, and appears in the printed plan', async () => {
  await setEnv({
    CC_PRE_BUILD_HOOK: 'echo "hook:pre-build uid=$(id -u) greeting=$GREETING"',
    CC_POST_BUILD_HOOK: 'echo "hook:post-build type=$INSTANCE_TYPE"',
    CC_PRE_RUN_HOOK: CAPTURED_HOOK,
    CC_RUN_SUCCEEDED_HOOK: 'echo "hook:succeeded"; exit 1',
    CC_RUN_FAILED_HOOK: 'echo "hook:failed"',
  });
  newRelease(dir, 'hooked');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  const log = await deploymentLog(daemon, appId, result.id);
  assert.equal(result.state, 'OK', log.join('\n'));
  const at = (marker: string) => log.findIndex((l) => l.startsWith(marker));
  for (const name of ['CC_PRE_BUILD_HOOK', 'CC_POST_BUILD_HOOK', 'CC_PRE_RUN_HOOK', 'CC_RUN_SUCCEEDED_HOOK', 'CC_RUN_FAILED_HOOK']) {
    assert.ok(
      log.some((l) => l.includes(name) && l.includes('bash')),
      `${name} is in the printed plan`,
    );
  }
  const preBuild = at('hook:pre-build');
  // The app's first build: nothing is kept from an earlier one, so npm installs.
  const install = log.findIndex((l) => /^==> \[build\] npm install\b/.test(l));
  const postBuild = at('hook:post-build');
  const preRun = at('hook:pre-run');
  const started = log.findIndex((l) => l.includes('[instance] started'));
  const succeeded = at('hook:succeeded');
  assert.ok(preBuild >= 0 && postBuild > preBuild && preRun > postBuild && started > preRun && succeeded > started, log.join('\n'));
  assert.ok(install >= 0, `the install runs:\n${log.join('\n')}`);
  assert.ok(preBuild < install && install < postBuild, 'pre-build before the install, post-build after');
  assert.match(log[preBuild]!, /greeting=hola/);
  assert.doesNotMatch(log[preBuild]!, /uid=0\b/, 'hooks never run as root');
  assert.match(log[postBuild]!, /type=build/);
  assert.match(log[preRun]!, /greeting=hola type=production/);
  assert.ok(log.some((l) => l.includes('CC_RUN_SUCCEEDED_HOOK exited with code 1 (the outcome of the deployment stays as it is)')));
  assert.equal(at('hook:failed'), -1, 'the failed hook does not run after a success');
  const answer = await seen();
  assert.equal(answer.release, 'hooked');
  assert.equal(answer.preRun, result.id, 'the instance reads what CC_PRE_RUN_HOOK wrote into its folder');
  hooked = result.id;
});

test('a failing pre-build hook fails the build with its name and exit code', async () => {
  await setEnv({ CC_PRE_BUILD_HOOK: 'echo "hook:pre-build failing"; exit 3' });
  newRelease(dir, 'bad-build');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'FAIL');
  const log = await deploymentLog(daemon, appId, result.id);
  assert.ok(
    log.some((l) => l.includes('==> [build] Build failed: CC_PRE_BUILD_HOOK exited with code 3')),
    log.join('\n'),
  );
  assert.ok(log.includes('CC_RUN_FAILED_HOOK was not run: the deployment failed before a release existed.'));
  assert.equal(await served(), 'hooked', 'the previous release keeps serving');
  await daemon.cli(['env', 'rm', 'CC_PRE_BUILD_HOOK', '--app', appId]);
});

test('a failing pre-run hook fails the deployment before any instance starts; the failed hook runs', async () => {
  await setEnv({ CC_PRE_RUN_HOOK: 'echo "hook:pre-run failing"; exit 4' });
  newRelease(dir, 'bad-run');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'FAIL');
  const log = await deploymentLog(daemon, appId, result.id);
  assert.ok(
    log.some((l) => l.includes('==> [run] Run failed: CC_PRE_RUN_HOOK exited with code 4')),
    log.join('\n'),
  );
  assert.ok(!log.some((l) => l.includes('[instance] started')), 'no instance started');
  assert.ok(log.includes('hook:failed'), 'CC_RUN_FAILED_HOOK ran');
  assert.equal(await served(), 'hooked');
});

test('slipway deploy returns once the deployment is OK, while CC_RUN_SUCCEEDED_HOOK still runs', async () => {
  await daemon.cli(['env', 'rm', 'CC_PRE_RUN_HOOK', '--app', appId]);
  // The hook outlasts the CLI by seconds. (A file the test would make in the release is no
  // signal: the sandbox sees its release through an overlay, which keeps what it looked up.)
  await setEnv({ CC_RUN_SUCCEEDED_HOOK: 'echo "hook:waiting"; sleep 8; echo "hook:done"' });
  try {
    newRelease(dir, 'slow-hook');
    const deployed = await daemon.cli(['deploy'], { cwd: dir, env: gitEnv });
    assert.equal(deployed.code, 0, deployed.stderr);
    const id = /^Deployment (deployment_\S+) OK\.$/m.exec(deployed.stderr)?.[1];
    assert.ok(id, deployed.stderr);
    assert.doesNotMatch(deployed.stderr, /^hook:done$/m, 'the CLI did not wait for the success hook');
    assert.equal(await served(), 'slow-hook', 'the new release serves when the CLI returns');
    // A follower arriving while the hook runs (the deployment already OK) stays until the log
    // ends, and gets the hook's later output.
    const log = await daemon.cli(['logs', '--app', appId, '--deployment-id', id, '--follow']);
    assert.match(log.stdout, /^hook:waiting$[\s\S]*^hook:done$/m, log.stdout);
    assert.match(log.stderr, new RegExp(`^Deployment ${id}: OK$`, 'm'), log.stderr);
  } finally {
    await daemon.cli(['env', 'rm', 'CC_RUN_SUCCEEDED_HOOK', '--app', appId]);
  }
});

test('what CC_PRE_RUN_HOOK wrote is kept with the release: every instance reads it, a restart and a rollback do not run it again', async () => {
  await setEnv({ CC_PRE_RUN_HOOK: CAPTURED_HOOK });
  newRelease(dir, 'layered');
  const layered = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(layered.state, 'OK', (await deploymentLog(daemon, appId, layered.id)).join('\n'));
  const scaled = await daemon.cli(['scale', '--instances', '2', '--app', appId]);
  assert.equal(scaled.code, 0, scaled.stderr);
  for (const [id, s] of await everyInstance(2)) {
    assert.equal(s.preRun, layered.id, `instance ${id} reads the file of the hook`);
    assert.equal(s.hookRuns, 'ran', 'the hook ran once for both instances');
  }
  const run = await daemon.cli(['run', '--app', appId, '--', 'cat', 'pre-run.txt']);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout.trim(), layered.id, 'a one-off command of the release reads it too');

  // What an instance writes into its folder is its own.
  assert.equal((await getThroughRouter(daemon, `${appId}.localhost`, '/write')).body, 'written');
  const after = [...(await everyInstance(2)).values()];
  const writers = after.filter((s) => s.own !== null);
  assert.equal(writers.length, 1, JSON.stringify(after));
  assert.equal(writers[0]!.own, writers[0]!.instanceId, 'the instance that wrote reads its own write');

  const noHookRan = async (cliOutput: string) => {
    const id = /(deployment_\S+) queued/.exec(cliOutput)?.[1];
    assert.ok(id, cliOutput);
    const log = await deploymentLog(daemon, appId, id);
    assert.ok(!log.some((l) => l.startsWith('hook:pre-run')), `the hook did not run again:\n${log.join('\n')}`);
    assert.ok(
      log.some((l) => l.includes('CC_PRE_RUN_HOOK already ran for this release')),
      log.join('\n'),
    );
  };
  const restarted = await daemon.cli(['restart', '--app', appId]);
  assert.equal(restarted.code, 0, restarted.stderr);
  await noHookRan(restarted.stderr);
  for (const s of (await everyInstance(2)).values()) {
    assert.deepEqual(
      [s.release, s.preRun, s.hookRuns, s.own],
      ['layered', layered.id, 'ran', null],
      'new instances: the kept layer, no write of the old ones',
    );
  }

  const rolledBack = await daemon.cli(['rollback', hooked, '--app', appId]);
  assert.equal(rolledBack.code, 0, rolledBack.stderr);
  await noHookRan(rolledBack.stderr);
  for (const s of (await everyInstance(2)).values()) {
    assert.deepEqual([s.release, s.preRun, s.hookRuns], ['hooked', hooked, 'ran'], "the release rolled back to has its own hook's files");
  }
});
