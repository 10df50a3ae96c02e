import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import {
  checkoutExample,
  commitAll,
  createApp,
  deploymentLog,
  getThroughRouter,
  gitPush,
  newRelease,
  pushAndWait,
  registerSshKey,
  waitForDeploymentOf,
} from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';

let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let dir: string;
let appId: string;
let url: string;

async function served(): Promise<string> {
  const response = await getThroughRouter(daemon, `${appId}.localhost`);
  assert.equal(response.status, 200);
  return String((JSON.parse(response.body) as { release: string }).release);
}

/** A commit whose build waits in a preinstall script, printing a marker first. */
function slowCommit(name: string): string {
  const path = join(dir, 'package.json');
  const pkg = JSON.parse(readFileSync(path, 'utf8'));
  // A length no other test sleeps for, so another file's `sleep` running beside is not counted.
  pkg.scripts.preinstall = `echo slow-build-${name} && sleep 127`;
  writeFileSync(path, JSON.stringify(pkg, null, 2));
  writeFileSync(join(dir, 'RELEASE'), `${name}\n`);
  return commitAll(dir, `slow ${name}`);
}

function fastCommit(name: string): string {
  const path = join(dir, 'package.json');
  const pkg = JSON.parse(readFileSync(path, 'utf8'));
  delete pkg.scripts.preinstall;
  writeFileSync(path, JSON.stringify(pkg, null, 2));
  return newRelease(dir, name);
}

async function waitForBuildMarker(name: string): Promise<string> {
  return waitUntil(
    `the slow build ${name} to start`,
    async () => {
      const list = JSON.parse((await daemon.cli(['activity', '--app', appId, '--format', 'json'])).stdout) as Array<{
        id: string;
        state: string;
      }>;
      const wip = list.find((d) => d.state === 'WIP');
      if (!wip) return undefined;
      return (await deploymentLog(daemon, appId, wip.id)).some((l) => l.includes(`slow-build-${name}`)) ? wip.id : undefined;
    },
    120_000,
  );
}

function sleepers(): string[] {
  return spawnSync('ps', ['-eo', 'args='], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((l) => l.startsWith('sleep 127'));
}

before(async () => {
  daemon = await startDaemon();
  ({ gitEnv } = await registerSshKey(daemon));
  dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'cancel');
  url = `git+ssh://git@127.0.0.1:${daemon.sshPort}/${appId}.git`;
  newRelease(dir, 'one');
  const first = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(first.state, 'OK', (await deploymentLog(daemon, appId, first.id)).join('\n'));
});

after(async () => {
  await daemon?.stop();
});

test('cancel-deploy kills the running build, marks it CANCELLED and the previous release keeps serving', async () => {
  slowCommit('two');
  assert.equal((await gitPush(dir, url, gitEnv)).code, 0);
  const id = await waitForBuildMarker('two');
  assert.equal(sleepers().length, 1, 'the build runs');
  const result = await daemon.cli(['cancel-deploy', '--app', appId]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, new RegExp(`Cancelled ${id}`));
  const ended = await waitUntil(
    'the cancelled deployment to end',
    async () => {
      const list = JSON.parse((await daemon.cli(['activity', '--app', appId, '--format', 'json'])).stdout) as Array<{
        id: string;
        state: string;
        message: string;
      }>;
      const d = list.find((x) => x.id === id)!;
      return d.state === 'WIP' ? undefined : d;
    },
    30_000,
  );
  assert.equal(ended.state, 'CANCELLED');
  assert.match(ended.message, /cancelled by admin/);
  const log = await deploymentLog(daemon, appId, id);
  assert.ok(
    log.some((l) => l.includes('Deployment cancelled during the build phase')),
    log.join('\n'),
  );
  assert.ok(log.includes('The previous release keeps serving.'));
  assert.equal(await served(), 'one');
  assert.deepEqual(sleepers(), [], 'no process of the build is left');
  const again = await daemon.cli(['cancel-deploy', '--app', appId]);
  assert.notEqual(again.code, 0, 'nothing left to cancel');
});

test('with cancel-on-push a newer push cancels the running deployment and deploys at once', async () => {
  const set = await daemon.cli(['config', 'set', 'cancel-on-push', 'true', '--app', appId]);
  assert.equal(set.code, 0, set.stderr);
  assert.equal((await daemon.cli(['config', 'get', 'cancel-on-push', '--app', appId])).stdout.trim(), 'true');
  const bad = await daemon.cli(['config', 'set', 'cancel-on-push', 'maybe', '--app', appId]);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /true or false/);

  slowCommit('three');
  assert.equal((await gitPush(dir, url, gitEnv)).code, 0);
  const slowId = await waitForBuildMarker('three');
  const fast = fastCommit('four');
  const push = await gitPush(dir, url, gitEnv);
  assert.equal(push.code, 0);
  assert.match(push.output, new RegExp(`cancel-on-push: cancelled ${slowId}`));
  const deployed = await waitForDeploymentOf(daemon, appId, fast, 120_000);
  assert.equal(deployed.state, 'OK');
  assert.equal(await served(), 'four');
  const list = JSON.parse((await daemon.cli(['activity', '--app', appId, '--format', 'json'])).stdout) as Array<{
    id: string;
    state: string;
  }>;
  assert.equal(list.find((d) => d.id === slowId)?.state, 'CANCELLED');
  assert.deepEqual(sleepers(), []);
});
