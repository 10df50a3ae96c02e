/**
 * No package manager stays beside the app: an npm app with a prestart script is deployed, its
 * prestart runs, and the sandbox then holds only its init (tini) and the app itself, which gets
 * SIGTERM straight from the init when the app is stopped.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, commitAll, createApp, deploymentLog, getThroughRouter, pushAndWait, registerSshKey } from '../support/deploy.js';

let daemon: TestDaemon;
let appId: string;
let dir: string;

interface Proc {
  pid: number;
  ppid: number;
  comm: string;
  args: string;
}

/** The processes of the app's own user, as ps sees them on the host. */
function processesOfApp(): Proc[] {
  const passwd = spawnSync('getent', ['passwd'], { encoding: 'utf8' }).stdout.split('\n').find((l) => l.includes(`slipway application ${appId}`));
  assert.ok(passwd, `no user for ${appId}`);
  const uid = passwd.split(':')[2]!;
  const out = spawnSync('ps', ['-o', 'pid=,ppid=,comm=,args=', '-u', uid], { encoding: 'utf8' }).stdout;
  return out
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [pid, ppid, comm, ...args] = l.trim().split(/\s+/);
      return { pid: Number(pid), ppid: Number(ppid), comm: comm!, args: args.join(' ') };
    });
}

async function appLog(): Promise<string> {
  return (await daemon.cli(['logs', '--app', appId])).stdout;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

before(async () => {
  daemon = await startDaemon();
  const { gitEnv } = await registerSshKey(daemon);
  dir = checkoutExample('node-sigterm');
  const pkgPath = join(dir, 'package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
  pkg.scripts.prestart = 'echo "prestart ran as $npm_lifecycle_event"';
  writeFileSync(pkgPath, JSON.stringify(pkg, null, 2));
  commitAll(dir, 'a prestart script');
  appId = await createApp(daemon, dir, 'no-manager');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
});

after(async () => {
  await daemon?.stop();
});

test('prestart runs, then the app is the sandbox main process: no npm, yarn, pnpm or bun stays beside it', async () => {
  const response = await getThroughRouter(daemon, `${appId}.localhost`);
  assert.equal(response.status, 200, response.body);
  // The app still sees which manager it belongs to, as npm would have told it.
  assert.match(String(JSON.parse(response.body).startedBy), /^npm\/\d+\.\d+\.\d+$/);
  assert.match(await appLog(), /prestart ran as prestart/);

  const processes = processesOfApp();
  const seen = processes.map((p) => `${p.comm} (${p.args})`).join('\n');
  const managers = processes.filter((p) => /^(npm|npx|yarn|pnpm|bun|corepack)\b/.test(p.comm) || /node_modules\/(npm|yarn|pnpm|corepack)\//.test(p.args));
  assert.deepEqual(managers, [], `a package manager stays beside the app:\n${seen}`);
  // Node names its main thread (comm shows "MainThread"): the command line tells the app.
  const app = processes.find((p) => /^(\S*\/)?node\s/.test(p.args));
  assert.ok(app, `no node process:\n${seen}`);
  const parent = processes.find((p) => p.pid === app.ppid);
  assert.equal(parent?.comm, 'tini', `the app's parent is the sandbox's init:\n${seen}`);
  assert.equal(processes.length, 2, `only the init and the app:\n${seen}`);
});

test('slipway stop: SIGTERM goes straight to the app, which closes cleanly', async () => {
  const stop = await daemon.cli(['stop', '--app', appId]);
  assert.equal(stop.code, 0, stop.stderr);
  const log = await waitFor('the app to log its SIGTERM and exit', async () => {
    const text = await appLog();
    return /received SIGTERM, closing the server/.test(text) && /server closed, exiting/.test(text) ? text : undefined;
  });
  assert.match(log, /process ended after SIGTERM \(exited with code 0\)/);
  assert.deepEqual(processesOfApp(), [], 'nothing of the app is left');
});
