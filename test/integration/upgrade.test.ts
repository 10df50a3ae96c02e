import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp, deploymentLog, getThroughRouter, newRelease, pushAndWait, registerSshKey } from '../support/deploy.js';
import { steadyLoad } from '../support/steady-load.js';

// An upgrade is the previous commit's build of slipway stopped (SIGTERM) and this one started on
// the same data folder: the apps never notice.
const repo = process.env.SLIPWAY_REPO ?? new URL('../..', import.meta.url).pathname;
let previousBin: string;
let previousCommit: string;
let daemon: TestDaemon;
let appId: string;
let host: string;

/** The previous commit's tree, built like a release of slipway (its own dist/, this clone's packages). */
function buildPreviousCommit(): string {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-previous-'));
  previousCommit = execFileSync('git', ['rev-parse', '--short', 'HEAD~1'], { cwd: repo, encoding: 'utf8' }).trim();
  const archive = execFileSync('git', ['archive', '--format=tar', 'HEAD~1'], { cwd: repo, maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
  execFileSync(join(repo, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: dir, stdio: 'inherit' });
  return join(dir, 'bin', 'slipway.js');
}

before(async () => {
  previousBin = buildPreviousCommit();
  daemon = await startDaemon([], { bin: previousBin });
  const { gitEnv } = await registerSshKey(daemon);
  const dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'upgraded');
  host = `${appId}.localhost`;
  newRelease(dir, 'before-upgrade');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
});

after(async () => {
  await daemon?.stop();
});

test('an upgrade from the previous commit to this one on the same data folder: zero failed requests, the same instance serves', {
  timeout: 300_000,
}, async () => {
  const before = JSON.parse((await getThroughRouter(daemon, host)).body) as { instanceId: string };
  const load = steadyLoad(daemon, host);
  await sleep(500);
  assert.equal(await daemon.terminate(), 0, `the build of ${previousCommit} stopped`);
  await daemon.restart({ bin: join(repo, 'bin', 'slipway.js') });
  await sleep(1000);
  const { failures, failureCount, counts } = await load.stop();
  assert.deepEqual(failures, [], `failed requests across the upgrade from ${previousCommit}: ${failureCount}`);
  for (const [kind, count] of Object.entries(counts)) assert.ok(count > 10, `${kind}: only ${count} requests`);
  const afterwards = JSON.parse((await getThroughRouter(daemon, host)).body) as { instanceId: string };
  assert.equal(afterwards.instanceId, before.instanceId, 'the instance the previous build started was adopted');
});
