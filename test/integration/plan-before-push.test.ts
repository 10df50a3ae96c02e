/**
 * `slipway plan` before the first push: in a folder whose commit the application never received,
 * the CLI sends the commit without deploying it and prints the plan the push would run, as text
 * and as data. Nothing is deployed and master does not move.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp, newRelease, pushAndWait, registerSshKey } from '../support/deploy.js';

let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let dir: string;
let appId: string;

const activity = async () => JSON.parse((await daemon.cli(['activity', '--app', appId, '--format', 'json'])).stdout) as unknown[];
const pushedCommit = async () =>
  (JSON.parse((await daemon.cli(['status', '--app', appId, '--format', 'json'])).stdout) as { pushed_commit?: string | null })
    .pushed_commit ?? null;
const head = () => execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();

before(async () => {
  daemon = await startDaemon();
  ({ gitEnv } = await registerSshKey(daemon));
  dir = checkoutExample('node-hello');
  newRelease(dir, 'planned');
  appId = await createApp(daemon, dir, 'plan-first');
});

after(async () => {
  await daemon?.stop();
});

test('slipway plan in a folder never pushed sends the commit, prints its plan and deploys nothing', async () => {
  const printed = await daemon.cli(['plan', '--app', appId], { cwd: dir, env: gitEnv });
  assert.equal(printed.code, 0, printed.stderr);
  assert.match(printed.stderr, /was never pushed to .*: sending it to plan it \(nothing is deployed\)/);
  const lines = printed.stdout.trimEnd().split('\n');
  assert.equal(lines[0], 'Build plan (node)');
  assert.ok(lines.includes('  Start: node server.js  (scripts.start in package.json)'), printed.stdout);

  const data = JSON.parse((await daemon.cli(['plan', '--app', appId, '--format', 'json'], { cwd: dir, env: gitEnv })).stdout);
  assert.equal(data.commit, head());
  assert.equal(data.plan.provider, 'node');

  assert.deepEqual(await activity(), [], 'planning deployed nothing');
  assert.equal(await pushedCommit(), null, 'master did not move');

  // A commit the folder does not have is still refused, saying so.
  const unknown = await daemon.cli(['plan', '--app', appId, '--commit', 'abcdef12'], { cwd: dir, env: gitEnv });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /No commit abcdef12 was pushed to this application/);
});

test('after planning, the first push deploys as usual, and a new local commit is planned the same way', async () => {
  const deployed = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(deployed.state, 'OK', deployed.push);
  assert.equal(await pushedCommit(), head());

  newRelease(dir, 'next');
  const planned = await daemon.cli(['plan', '--app', appId, '--format', 'json'], { cwd: dir, env: gitEnv });
  assert.equal(planned.code, 0, planned.stderr);
  assert.equal(JSON.parse(planned.stdout).commit, head());
  assert.equal((await activity()).length, 1, 'still the one deployment');
  assert.notEqual(await pushedCommit(), head(), 'master still holds the deployed commit');
});
