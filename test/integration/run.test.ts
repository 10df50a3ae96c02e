import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { SLIPWAY_BIN } from '../support/cli.js';
import { checkoutExample, createApp, deploymentLog, newRelease, pushAndWait, registerSshKey } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';

let daemon: TestDaemon;
let dir: string;
let appId: string;

before(async () => {
  daemon = await startDaemon();
  const { gitEnv } = await registerSshKey(daemon);
  dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'oneoff', { GREETING: 'salut' });
  const empty = await daemon.cli(['run', '--app', appId, '--', 'true']);
  assert.notEqual(empty.code, 0);
  assert.match(empty.stderr, /no release to run a command in/);
  newRelease(dir, 'ran');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
});

after(async () => {
  await daemon?.stop();
});

test('run executes in the release with the app environment as the app user; the exit code is the command’s', async () => {
  const r = await daemon.cli([
    'run',
    '--app',
    appId,
    '--',
    'node',
    '-e',
    'console.log(process.env.GREETING, process.env.INSTANCE_TYPE, require("fs").readFileSync("RELEASE","utf8").trim(), process.getuid() !== 0); console.error("to stderr"); process.exit(7)',
  ]);
  assert.equal(r.code, 7, r.stderr);
  assert.equal(r.stdout, 'salut run ran true\n');
  assert.equal(r.stderr, 'to stderr\n');
  assert.equal((await daemon.cli(['run', '--app', appId, '--', 'true'])).code, 0);
});

test('standard input reaches the command, and its end ends the input', async () => {
  const r = await daemon.cli(['run', '--app', appId, '--', 'bash', '-c', 'while read line; do echo "got:$line"; done; echo eof'], {
    stdin: 'one\ntwo\n',
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'got:one\ngot:two\neof\n');
});

test('the command is killed when the client goes away', async () => {
  const child = spawn(process.execPath, [SLIPWAY_BIN, 'run', '--app', appId, '--', 'sleep', '4242'], {
    env: { ...process.env, SLIPWAY_URL: daemon.apiUrl, SLIPWAY_TOKEN: daemon.adminToken },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const running = () => spawnSync('pgrep', ['-f', '^sleep 4242$']).status === 0;
  await waitUntil('the one-off command to run', async () => (running() ? true : undefined), 30_000);
  child.kill('SIGKILL');
  await waitUntil('the one-off command to be killed', async () => (running() ? undefined : true), 30_000);
});

test('a command that cannot be parsed or an unknown app is refused clearly', async () => {
  const none = await daemon.cli(['run', '--app', appId]);
  assert.equal(none.code, 2, 'a command is required');
  const other = await daemon.cli(['run', '--app', 'app_00000000-0000-4000-8000-000000000000', '--', 'true']);
  assert.notEqual(other.code, 0);
});
