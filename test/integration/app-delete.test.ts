import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { SLIPWAY_BIN } from '../support/cli.js';
import {
  checkoutExample,
  commitAll,
  createApp,
  deploymentLog,
  getThroughRouter,
  newRelease,
  pushAndWait,
  registerSshKey,
} from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';
import { userNameFor } from '../../src/sandbox/app-users.js';

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
  assert.ok(pidsOfApp(user.uid, appId, 'named').length > 0, 'its instance runs as that user');
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
  assert.deepEqual(commandsOf(pidsOfApp(user.uid, appId)), [], 'no process of the app is left');
  const status = await daemon.cli(['status', '--app', appId]);
  assert.notEqual(status.code, 0, 'the app is unknown afterwards');

  const again = await daemon.cli(['create', '--type', 'node', 'doomed', '--region', 'par', '--org', 'default'], {
    cwd: checkoutExample('node-hello'),
  });
  assert.equal(again.code, 0, `the name is free again: ${again.stderr}`);
});

/**
 * Pids of the app: a real, effective, saved or filesystem uid of `uid`, straight from /proc, but
 * none whose environment names another app. Once the app is deleted its number is free again, and
 * another daemon on this machine may give it to a new app at once (its processes carry its APP_ID).
 * `named`: only those that name this app (a process starting a sandbox has no APP_ID yet).
 */
function pidsOfApp(uid: number, appId: string, only: 'or unnamed' | 'named' = 'or unnamed'): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((pid) => {
      try {
        const line = /^Uid:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '';
        if (!line.split(/\s+/).map(Number).includes(uid)) return false;
        const named = readFileSync(`/proc/${pid}/environ`, 'utf8')
          .split('\0')
          .find((v) => v.startsWith('APP_ID='));
        return named === `APP_ID=${appId}` || (named === undefined && only === 'or unnamed');
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The command lines of those processes, for a failure's message. */
function commandsOf(pids: number[]): string[] {
  return pids.map((pid) => {
    try {
      return `${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')}`;
    } catch {
      return `${pid}: (gone)`;
    }
  });
}

test('deleting an app ends its cron run, one-off command, worker and drain within seconds, then removes its user', async () => {
  // An HTTP drain receiver on loopback, counting the batches it gets.
  let batches = 0;
  const receiver: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      batches++;
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;
  const dir = checkoutExample('node-hello');
  mkdirSync(join(dir, 'clevercloud'));
  writeFileSync(join(dir, 'clevercloud', 'cron.json'), `${JSON.stringify(['* * * * * /bin/sleep 600'])}\n`);
  commitAll(dir, 'a cron job that runs for ten minutes');
  const appId = await createApp(daemon, dir, 'everything', {
    // A worker printing a line a second: its drain has something to send until the end.
    CC_WORKER_COMMAND: 'while true; do echo worker-tick; sleep 1; done',
  });
  const drain = await daemon.cli(['drain', 'create', 'http', `http://127.0.0.1:${port}/logs`], { cwd: dir });
  assert.equal(drain.code, 0, drain.stderr);
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
  const user = userOf(appId)!;
  assert.ok(user, 'the app has its own user');
  const oneOff = spawn(process.execPath, [SLIPWAY_BIN, 'run', '--app', appId, '--', 'sleep', '600'], {
    env: { ...process.env, SLIPWAY_URL: daemon.apiUrl, SLIPWAY_TOKEN: daemon.adminToken },
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  try {
    // Positive controls: the cron run, the one-off command and the worker run as the app's user; the drain delivers.
    await waitUntil(
      'the cron run, the one-off command and the worker to run',
      async () => {
        const jobs = JSON.parse((await daemon.cli(['cron', '--app', appId, '--format', 'json'])).stdout) as Array<{ running: boolean }>;
        const commands = commandsOf(pidsOfApp(user.uid, appId)).join('\n');
        const sleeps = commands.match(/sleep 600/g)?.length ?? 0;
        return jobs[0]?.running && sleeps >= 2 && commands.includes('while true') ? true : undefined;
      },
      90_000,
    );
    await waitUntil('the drain to deliver', async () => (batches > 0 ? true : undefined), 30_000);

    const started = Date.now();
    const deleted = await daemon.cli(['delete', '--app', appId, '--yes'], { cwd: dir });
    assert.equal(deleted.code, 0, deleted.stderr);
    const took = Date.now() - started;
    assert.ok(took < 15_000, `deleted within seconds (${took} ms)`);
    // Once the deletion answered: nothing of the app runs, its user is gone, its drain is quiet.
    assert.deepEqual(commandsOf(pidsOfApp(user.uid, appId)), [], 'no process of the app is left');
    assert.ok(
      !readFileSync('/etc/passwd', 'utf8')
        .split('\n')
        .some((l) => l.startsWith(`${user.name}:`)),
      'its user is gone',
    );
    assert.ok(
      !readFileSync('/etc/group', 'utf8')
        .split('\n')
        .some((l) => l.startsWith(`${user.name}:`)),
      'its group is gone',
    );
    const sent = batches;
    await new Promise((resolve) => setTimeout(resolve, 6000));
    assert.equal(batches, sent, 'the drain sends nothing after the deletion');
    assert.deepEqual(commandsOf(pidsOfApp(user.uid, appId, 'named')), [], 'nothing of the app came back');
    // The CLI session of the one-off command ended with it.
    await waitUntil('slipway run to end', async () => (oneOff.exitCode !== null || oneOff.signalCode !== null ? true : undefined), 10_000);
  } finally {
    oneOff.kill('SIGKILL');
    receiver.closeAllConnections();
    receiver.close();
  }
});

/** The number of a group, from the machine's group database; undefined when there is none. */
function gidOfGroup(name: string): number | undefined {
  const found = spawnSync('getent', ['group', name], { encoding: 'utf8' });
  return found.status === 0 ? Number(found.stdout.split(':')[2]) : undefined;
}

test("a group of the app's name left with another number (a daemon stopped between groupadd and useradd) is replaced: the push deploys", async () => {
  const dir = checkoutExample('node-hello');
  newRelease(dir, 'left-group');
  const appId = await createApp(daemon, dir, 'left-group');
  const name = userNameFor(appId);
  // A number at the top of the apps' range that no user or group has: the daemon gives the lowest free one.
  let leftGid = 2_099_999;
  while (spawnSync('getent', ['group', String(leftGid)]).status === 0 || spawnSync('getent', ['passwd', String(leftGid)]).status === 0)
    leftGid--;
  assert.equal(spawnSync('groupadd', ['--system', '--gid', String(leftGid), name]).status, 0);
  try {
    const result = await pushAndWait(daemon, dir, appId, gitEnv);
    assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
    const user = userOf(appId);
    assert.ok(user, 'the app has its user');
    assert.notEqual(user.uid, leftGid);
    assert.equal(gidOfGroup(name), user.uid, "the app's group has its user's number");
    assert.equal(spawnSync('getent', ['group', String(leftGid)]).status, 2, 'the group left behind is gone');
    assert.equal((await getThroughRouter(daemon, `${appId}.localhost`)).status, 200);
  } finally {
    if (gidOfGroup(name) === leftGid) spawnSync('groupdel', [name]);
    await daemon.cli(['delete', '--app', appId, '--yes'], { cwd: dir });
  }
});
