import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp, deploymentLog, getThroughRouter, newRelease, pushAndWait, registerSshKey } from '../support/deploy.js';

let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let dir: string;
let appId: string;
let host: string;
const releases: Record<string, { id: string; commit: string }> = {};

async function served(): Promise<string> {
  const response = await getThroughRouter(daemon, host);
  assert.equal(response.status, 200);
  return String((JSON.parse(response.body) as { release: string }).release);
}

async function activity(): Promise<Array<{ id: string; state: string; cause: string; commit: string }>> {
  return JSON.parse((await daemon.cli(['activity', '--app', appId, '--format', 'json', '--limit', '50'])).stdout);
}

before(async () => {
  // Two kept releases, so the test also sees one leave the disk.
  daemon = await startDaemon(['--kept-releases', '2']);
  ({ gitEnv } = await registerSshKey(daemon));
  dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'rollback');
  host = `${appId}.localhost`;
  for (const name of ['one', 'two']) {
    newRelease(dir, name);
    const result = await pushAndWait(daemon, dir, appId, gitEnv);
    assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
    releases[name] = { id: result.id, commit: result.commit };
  }
});

after(async () => {
  await daemon?.stop();
});

test('rollback goes back to the previous OK release without a build, recorded with its cause', async () => {
  assert.equal(await served(), 'two');
  const result = await daemon.cli(['rollback', '--app', appId]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, new RegExp(`back to the release of deployment ${releases.one!.id}`));
  assert.equal(await served(), 'one');
  const latest = (await activity())[0]!;
  assert.equal(latest.state, 'OK');
  assert.equal(latest.cause, `rollback to deployment ${releases.one!.id}`);
  assert.equal(latest.commit, releases.one!.commit);
  const log = await deploymentLog(daemon, appId, latest.id);
  assert.ok(
    log.some((l) => l.includes('Reusing the release built for commit')),
    log.join('\n'),
  );
  assert.ok(!log.some((l) => l.includes('Build plan')), 'a rollback does not build');
});

test('rollback to a given deployment id, and restart --commit reuses its kept release', async () => {
  const toTwo = await daemon.cli(['rollback', releases.two!.id, '--app', appId]);
  assert.equal(toTwo.code, 0, toTwo.stderr);
  assert.equal(await served(), 'two');
  const byCommit = await daemon.cli(['restart', '--commit', releases.one!.commit.slice(0, 10), '--app', appId]);
  assert.equal(byCommit.code, 0, byCommit.stderr);
  assert.match(byCommit.stderr, /kept release/);
  assert.equal(await served(), 'one');
});

test('after a failed deployment the previous release keeps serving and rollback still works', async () => {
  await daemon.cli(['env', 'set', 'CC_HEALTH_CHECK_PATH', '/missing', '--app', appId]);
  newRelease(dir, 'broken');
  const failed = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(failed.state, 'FAIL');
  assert.equal(await served(), 'one');
  await daemon.cli(['env', 'rm', 'CC_HEALTH_CHECK_PATH', '--app', appId]);
  const result = await daemon.cli(['rollback', '--app', appId]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(await served(), 'two', 'the newest kept release other than the serving one');
  const failedRollback = await daemon.cli(['rollback', failed.id, '--app', appId]);
  assert.notEqual(failedRollback.code, 0);
  assert.match(failedRollback.stderr, /did not end OK/);
});

test('releases beyond the kept count leave the disk; restart --commit then builds the commit again', async () => {
  newRelease(dir, 'three');
  const three = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(three.state, 'OK');
  const folders = readdirSync(join(daemon.dataDir, 'apps', appId, 'releases'));
  assert.equal(folders.length, 2, `two kept releases: ${folders.join(', ')}`);
  assert.ok(!folders.includes(releases.one!.id), 'the oldest release is gone');
  const refused = await daemon.cli(['rollback', releases.one!.id, '--app', appId]);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /no longer kept/);
  assert.match(refused.stderr, /restart --commit/);
  const rebuilt = await daemon.cli(['restart', '--commit', releases.one!.commit, '--app', appId]);
  assert.equal(rebuilt.code, 0, rebuilt.stderr);
  assert.match(rebuilt.stderr, /building it/);
  assert.equal(await served(), 'one');
});
