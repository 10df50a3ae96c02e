import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import {
  checkoutExample,
  commitAll,
  createApp,
  deploymentLog,
  newRelease,
  pushAndWait,
  registerSshKey,
  waitForDeploymentOf,
} from '../support/deploy.js';
import { steadyLoad } from '../support/steady-load.js';

// A deployment running when the daemon dies is ended at the next start (CANCELLED, saying
// slipway restarted during it), its build sandbox and folder removed; the push queued behind it
// runs; the previous release serves throughout.
let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let dir: string;
let appId: string;

interface Activity {
  id: string;
  commit: string;
  state: string;
  message: string | null;
}

const activity = async (): Promise<Activity[]> =>
  JSON.parse((await daemon.cli(['activity', '--app', appId, '--format', 'json', '--limit', '20'])).stdout) as Activity[];

/** A git push that does not block this process (the load runs meanwhile). */
const push = () =>
  promisify(execFile)('git', ['push', `git+ssh://git@127.0.0.1:${daemon.sshPort}/${appId}.git`, 'master'], { cwd: dir, env: gitEnv });

/**
 * Build sandboxes of this daemon still running (their monitors hold bundles of the data
 * folder); with a deployment id, only that deployment's.
 */
function buildMonitors(deploymentId?: string): string[] {
  const prefix = deploymentId === undefined ? 'd-' : `d-${deploymentId.replace(/^deployment_/, '')}-`;
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        const cmdline = readFileSync(join('/proc', pid, 'cmdline'), 'utf8');
        return cmdline.startsWith('/usr/bin/conmon\0') && cmdline.includes(`${daemon.dataDir}/sandboxes/${prefix}`) ? [pid] : [];
      } catch {
        return [];
      }
    });
}

before(async () => {
  daemon = await startDaemon();
  ({ gitEnv } = await registerSshKey(daemon));
  dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'interrupted');
  newRelease(dir, 'serving');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
});

after(async () => {
  await daemon?.stop();
});

test('kill -9 during a build: that deployment ends CANCELLED with the reason, its build is gone, the queued push runs, the old release serves throughout', {
  timeout: 300_000,
}, async () => {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ ...pkg, scripts: { ...pkg.scripts, preinstall: 'touch cut-build-was-here && sleep 600' } }, null, 2),
  );
  const slow = newRelease(dir, 'slow');
  await push();
  // The slow build runs: its sandbox is up.
  for (let i = 0; i < 300 && buildMonitors().length === 0; i++) await sleep(200);
  assert.ok(buildMonitors().length > 0, 'the slow build started');
  // The build folder is the daemon's business: found by the marker the build step writes.
  const markers = () =>
    execFileSync('find', [join(daemon.dataDir, 'apps'), '-path', '*/build/*', '-name', 'cut-build-was-here'], { encoding: 'utf8' }).trim();
  for (let i = 0; i < 300 && markers() === ''; i++) await sleep(200);
  assert.notEqual(markers(), '', 'the slow build is in its build step (its folder holds the marker)');
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
  commitAll(dir, 'fast again');
  const queued = newRelease(dir, 'queued');
  await push();
  const waiting = (await activity()).find((d) => d.commit === queued);
  assert.equal(waiting?.state, 'WIP', 'the second push waits its turn');

  const load = steadyLoad(daemon, `${appId}.localhost`);
  await daemon.kill();
  await sleep(1000);
  await daemon.restart();
  const cut = (await activity()).find((d) => d.commit === slow)!;
  assert.equal(cut.state, 'CANCELLED');
  assert.match(cut.message ?? '', /slipway restarted during this deployment/);
  assert.match((await deploymentLog(daemon, appId, cut.id)).join('\n'), /slipway restarted during this deployment/);
  // The queued push's build may already run: the cut deployment's is the one that must be gone.
  assert.deepEqual(buildMonitors(cut.id), [], 'the build sandbox was killed');
  // The queued push's build may use the app's build folder again, from a fresh export.
  assert.equal(markers(), '', "the cut build's folder was removed");

  const next = await waitForDeploymentOf(daemon, appId, queued);
  assert.equal(next.state, 'OK', (await deploymentLog(daemon, appId, next.id)).join('\n'));
  assert.equal(next.id, waiting!.id, 'the queued push ran under its own id');
  const { failures, failureCount, releases } = await load.stop();
  assert.deepEqual(failures, [], `failed requests: ${failureCount}`);
  assert.ok(releases.has('serving'), `the previous release served meanwhile (saw ${[...releases].join(', ')})`);
});
