import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp, deploymentLog, getThroughRouter, newRelease, pushAndWait, registerSshKey } from '../support/deploy.js';
import { steadyLoad } from '../support/steady-load.js';
import { buildPreviousCommit, REPO } from '../support/previous-build.js';

// An upgrade is the previous commit's build of slipway stopped (SIGTERM) and this one started on
// the same data folder: the apps never notice.
let previousBin: string;
let previousCommit: string;
let daemon: TestDaemon;
let appId: string;
let host: string;

before(async () => {
  ({ bin: previousBin, commit: previousCommit } = buildPreviousCommit());
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
  await daemon.restart({ bin: join(REPO, 'bin', 'slipway.js') });
  await sleep(1000);
  const { failures, failureCount, counts } = await load.stop();
  assert.deepEqual(failures, [], `failed requests across the upgrade from ${previousCommit}: ${failureCount}`);
  for (const [kind, count] of Object.entries(counts)) assert.ok(count > 10, `${kind}: only ${count} requests`);
  const afterwards = JSON.parse((await getThroughRouter(daemon, host)).body) as { instanceId: string };
  assert.equal(afterwards.instanceId, before.instanceId, 'the instance the previous build started was adopted');
});
