import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp, deploymentLog, getThroughRouter, newRelease, pushAndWait, registerSshKey } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';

let daemon: TestDaemon;

after(async () => {
  await daemon?.stop();
});

test('a data folder from before per-app users and filesystems is migrated on the first start: users made, folders re-owned and moved in, no rebuild', async () => {
  daemon = await startDaemon();
  const { gitEnv } = await registerSshKey(daemon);
  const dir = checkoutExample('node-hello');
  const appId = await createApp(daemon, dir, 'upgraded');
  newRelease(dir, 'before-upgrade');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
  assert.equal(await daemon.stop(), 0);

  // What the previous versions left: the app's releases, caches and repository in shared
  // folders (no filesystem of its own), one shared unprivileged owner, open modes, no app users.
  const releases = join(daemon.dataDir, 'releases', appId);
  const cache = join(daemon.dataDir, 'cache', 'apps', appId);
  const repository = join(daemon.dataDir, 'repos', `${appId}.git`);
  const own = join(daemon.dataDir, 'apps', appId);
  const image = join(daemon.dataDir, 'disks', `${appId}.img`);
  const scratch = mkdtempSync(join(tmpdir(), 'slipway-upgrade-'));
  execFileSync('mount', ['-o', 'loop', image, scratch]);
  try {
    execFileSync('mkdir', ['-p', join(daemon.dataDir, 'cache', 'apps')]);
    execFileSync('cp', ['-a', join(scratch, 'releases'), releases]);
    execFileSync('cp', ['-a', join(scratch, 'cache'), cache]);
    execFileSync('cp', ['-a', join(scratch, 'repo.git'), repository]);
  } finally {
    execFileSync('umount', [scratch]);
  }
  rmSync(image);
  rmSync(own, { recursive: true });
  const db = new Database(join(daemon.dataDir, 'slipway.db'));
  const newPath = join(own, 'releases');
  db.prepare('UPDATE releases SET release_dir = replace(release_dir, ?, ?), start_json = replace(start_json, ?, ?)').run(
    newPath,
    releases,
    newPath,
    releases,
  );
  db.prepare('UPDATE deployments SET release_json = replace(release_json, ?, ?)').run(newPath, releases);
  const name = (db.prepare('SELECT name FROM app_users WHERE app_id = ?').get(appId) as { name: string }).name;
  db.prepare('DELETE FROM app_users').run();
  db.close();
  spawnSync('userdel', [name]);
  spawnSync('groupdel', [name]);
  for (const folder of [releases, cache]) {
    execFileSync('chown', ['-R', '65534:65534', folder]);
    chmodSync(folder, 0o755);
  }
  chmodSync(join(daemon.dataDir, 'slipway.db'), 0o644);
  chmodSync(daemon.dataDir, 0o755);

  await daemon.restart();
  assert.match(daemon.output(), new RegExp(`Handed ${releases.replaceAll('/', '\\/')} to slw-`));
  await waitUntil(
    'the app to serve again',
    async () => ((await getThroughRouter(daemon, `${appId}.localhost`)).status === 200 ? true : undefined),
    60_000,
  );
  assert.equal(JSON.parse((await getThroughRouter(daemon, `${appId}.localhost`)).body).release, 'before-upgrade');
  const activity = JSON.parse((await daemon.cli(['activity', '--app', appId, '--format', 'json'])).stdout) as unknown[];
  assert.equal(activity.length, 1, 'no new deployment, no rebuild');
  const owner = statSync(releases).uid;
  assert.ok(owner >= 2_000_000, `re-owned by the app's own user (${owner})`);
  assert.equal(statSync(join(releases, result.id, 'server.js')).uid, owner, 'down the tree');
  assert.equal(statSync(releases).mode & 0o777, 0o700);
  assert.equal(statSync(join(own, 'cache')).uid, owner, 'the cache was moved into the app’s filesystem, owned by it');
  assert.equal(existsSync(cache), false);
  assert.ok(existsSync(join(own, 'repo.git', 'HEAD')), 'so was the repository');
  assert.equal(existsSync(repository), false);
  assert.match(execFileSync('findmnt', ['-n', '-o', 'FSTYPE', own], { encoding: 'utf8' }), /ext4/, 'the app has its own filesystem');
  // The repository kept its history: a push of a new commit sends only that commit, and builds.
  newRelease(dir, 'after-upgrade');
  const next = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(next.state, 'OK', (await deploymentLog(daemon, appId, next.id)).join('\n'));
  assert.equal(JSON.parse((await getThroughRouter(daemon, `${appId}.localhost`)).body).release, 'after-upgrade');
  assert.ok(existsSync(join(own, 'releases', next.id)), 'new releases are built in the app’s filesystem');
  assert.equal(statSync(join(daemon.dataDir, 'slipway.db')).mode & 0o777, 0o600, 'the store is root’s alone again');
  assert.equal(statSync(daemon.dataDir).mode & 0o777, 0o711);
  assert.match(spawnSync('getent', ['passwd', String(owner)], { encoding: 'utf8' }).stdout, /slipway application/);

  const subnet = /instances on 10\.(\d+)\.0\.0\/16/.exec(daemon.output())?.[1];
  assert.ok(subnet, 'the daemon says its subnet');
  assert.equal(await daemon.stop(), 0);
  for (const group of [
    `/sys/fs/cgroup/memory/slipway${subnet}`,
    `/sys/fs/cgroup/pids/slipway${subnet}`,
    `/sys/fs/cgroup/slipway${subnet}`,
  ]) {
    assert.equal(existsSync(group), false, `${group} is removed by a clean stop`);
  }
  const left = spawnSync('ps', ['-o', 'pid=,args=', '-u', String(owner)], { encoding: 'utf8' }).stdout.trim();
  assert.equal(left, '', 'a clean stop leaves no process of the app behind');
  assert.equal(spawnSync('pgrep', ['-f', `runc --root ${daemon.dataDir}`]).status, 1, 'nor any runc of the daemon');
});
