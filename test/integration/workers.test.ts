import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp, deploymentLog, getThroughRouter, newRelease, pushAndWait, registerSshKey } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';

let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let dir: string;
let appId: string;

async function appLog(): Promise<string[]> {
  const r = await daemon.cli(['logs', '--app', appId]);
  return r.stdout.split('\n');
}

async function setEnv(vars: Record<string, string>): Promise<void> {
  for (const [k, v] of Object.entries(vars)) assert.equal((await daemon.cli(['env', 'set', k, v, '--app', appId])).code, 0);
}

async function restart(): Promise<void> {
  const r = await daemon.cli(['restart', '--app', appId]);
  assert.equal(r.code, 0, r.stderr);
}

function count(lines: string[], text: string): number {
  return lines.filter((l) => l.includes(text)).length;
}

before(async () => {
  daemon = await startDaemon();
  ({ gitEnv } = await registerSshKey(daemon));
  dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'workers', {
    GREETING: 'hola',
    CC_WORKER_COMMAND: 'echo "tick-a $GREETING $INSTANCE_NUMBER"; sleep 0.3; exit 3',
    CC_WORKER_COMMAND_1: 'echo "tick-b"; exit 0',
    CC_WORKER_RESTART_DELAY: '0.5',
  });
});

after(async () => {
  await daemon?.stop();
});

test('workers run beside the instance with the app environment; on-failure restarts only failing ones', async () => {
  newRelease(dir, 'one');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
  assert.equal((await getThroughRouter(daemon, `${appId}.localhost`)).status, 200, 'the instance itself serves');
  const lines = await waitUntil(
    'the failing worker to be restarted twice',
    async () => {
      const l = await appLog();
      return count(l, '[worker] tick-a hola 0') >= 3 ? l : undefined;
    },
    30_000,
  );
  assert.ok(count(lines, 'worker worker exited with code 3; restarting in 0.5 s') >= 2, lines.join('\n'));
  assert.equal(count(lines, '[worker-1] tick-b'), 1, 'the worker that succeeded is not restarted under on-failure');
  assert.ok(lines.some((l) => l.includes('worker worker-1 exited with code 0; not restarted (CC_WORKER_RESTART=on-failure)')));
});

test('CC_WORKER_RESTART=always restarts a worker that ended well; no restarts nothing', async () => {
  await setEnv({ CC_WORKER_RESTART: 'always' });
  await restart();
  await waitUntil(
    'the succeeding worker to be restarted',
    async () => (count(await appLog(), '[worker-1] tick-b') >= 3 ? true : undefined),
    30_000,
  );
  await setEnv({ CC_WORKER_RESTART: 'no', CC_WORKER_COMMAND: 'echo "tick-c"; exit 5' });
  await restart();
  await waitUntil(
    'the worker to end without restart',
    async () =>
      (await appLog()).some((l) => l.includes('worker worker exited with code 5; not restarted (CC_WORKER_RESTART=no)')) ? true : undefined,
    30_000,
  );
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(count(await appLog(), '[worker] tick-c'), 1);
});

test('long-running workers stop with their instance', async () => {
  await setEnv({ CC_WORKER_COMMAND: 'echo "tick-d"; exec sleep 1000', CC_WORKER_RESTART: 'on-failure' });
  await restart();
  await waitUntil(
    'the long worker to run',
    async () => (spawnSync('pgrep', ['-f', '^sleep 1000$']).status === 0 ? true : undefined),
    30_000,
  );
  const stop = await daemon.cli(['stop', '--app', appId]);
  assert.equal(stop.code, 0, stop.stderr);
  await waitUntil('the worker to stop', async () => (spawnSync('pgrep', ['-f', '^sleep 1000$']).status !== 0 ? true : undefined), 30_000);
});

test('the daemon stops promptly while a worker waits to be restarted', async () => {
  await setEnv({ CC_WORKER_COMMAND: 'echo "tick-e"; exit 1', CC_WORKER_RESTART: 'on-failure', CC_WORKER_RESTART_DELAY: '600' });
  await restart();
  await waitUntil(
    'the worker to wait for its restart',
    async () => ((await appLog()).some((l) => l.includes('worker worker exited with code 1; restarting in 600 s')) ? true : undefined),
    30_000,
  );
  const started = Date.now();
  const code = await Promise.race([daemon.stop(), new Promise<'hung'>((r) => setTimeout(() => r('hung'), 30_000))]);
  assert.notEqual(code, 'hung', 'the stop did not wait for the restart delay');
  assert.ok(Date.now() - started < 30_000);
});
