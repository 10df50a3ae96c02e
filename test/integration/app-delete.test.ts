import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp, deploymentLog, getThroughRouter, newRelease, pushAndWait, registerSshKey } from '../support/deploy.js';

let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;

before(async () => {
  daemon = await startDaemon();
  ({ gitEnv } = await registerSshKey(daemon));
});

after(async () => {
  await daemon?.stop();
});

function userOf(appId: string): { name: string; uid: number } | undefined {
  const out = spawnSync('getent', ['passwd'], { encoding: 'utf8' }).stdout;
  const line = out.split('\n').find((l) => l.includes(`slipway application ${appId}`));
  if (!line) return undefined;
  const [name, , uid] = line.split(':');
  return { name: name!, uid: Number(uid) };
}

function processesOf(uid: number): string[] {
  return spawnSync('ps', ['-o', 'pid=,args=', '-u', String(uid)], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((l) => l.trim() !== '');
}

test('slipway delete stops the app, frees its name and leaves no route, folder, repository, process or user behind', async () => {
  const dir = checkoutExample('node-hello');
  newRelease(dir, 'doomed');
  const appId = await createApp(daemon, dir, 'doomed');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
  const host = `${appId}.localhost`;
  assert.equal((await getThroughRouter(daemon, host)).status, 200);
  const user = userOf(appId);
  assert.ok(user, 'the app has its own unix user while it exists');
  assert.ok(processesOf(user.uid).length > 0, 'its instance runs as that user');
  const folders = [
    join(daemon.dataDir, 'apps', appId, 'releases'),
    join(daemon.dataDir, 'apps', appId, 'cache'),
    join(daemon.dataDir, 'apps', appId, 'repo.git'),
    // Its own filesystem's image: unmounted and removed with it.
    join(daemon.dataDir, 'disks', `${appId}.img`),
  ];
  for (const folder of folders) assert.ok(existsSync(folder), `${folder} exists before`);

  const refused = await daemon.cli(['delete', '--app', appId], { cwd: dir, stdin: '' });
  assert.notEqual(refused.code, 0, 'without --yes and without a terminal nothing is deleted');
  assert.match(refused.stderr, /--yes/);
  assert.equal((await getThroughRouter(daemon, host)).status, 200);

  const deleted = await daemon.cli(['delete', '--app', appId, '--yes'], { cwd: dir });
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.match(deleted.stderr, /Deleted doomed/);

  assert.equal((await getThroughRouter(daemon, host)).status, 404, 'the domain is gone from the router');
  for (const folder of folders) assert.equal(existsSync(folder), false, `${folder} is removed`);
  assert.ok(!readFileSync('/proc/self/mountinfo', 'utf8').includes(join(daemon.dataDir, 'apps', appId)), 'its filesystem is unmounted');
  assert.equal(userOf(appId), undefined, 'the unix user is removed');
  assert.deepEqual(processesOf(user.uid), [], 'no process of the app is left');
  const status = await daemon.cli(['status', '--app', appId]);
  assert.notEqual(status.code, 0, 'the app is unknown afterwards');

  const again = await daemon.cli(['create', '--type', 'node', 'doomed', '--region', 'par', '--org', 'default'], {
    cwd: checkoutExample('node-hello'),
  });
  assert.equal(again.code, 0, `the name is free again: ${again.stderr}`);
});
