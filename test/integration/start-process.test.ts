/**
 * No package manager stays beside the app: an npm app with a prestart script is deployed, its
 * prestart runs, and the sandbox then holds only its init (tini) and the app itself, which gets
 * SIGTERM straight from the init when the app is stopped. The same for a Yarn Plug'n'Play app
 * whose start script names a dependency's binary (micro, inside a zip of Yarn's cache), which
 * only `yarn run` would find without the build's `yarn bin`.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, commitAll, createApp, deploymentLog, getThroughRouter, pushAndWait, registerSshKey } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';

let daemon: TestDaemon;
/** The npm app and the Yarn Plug'n'Play app whose start script is a binary. */
let npmApp: string;
let pnpApp: string;
let pnpDeployment: string;

interface Proc {
  pid: number;
  ppid: number;
  comm: string;
  args: string;
}

/** The processes of the app's own user, as ps sees them on the host. */
function processesOfApp(appId: string): Proc[] {
  const passwd = spawnSync('getent', ['passwd'], { encoding: 'utf8' })
    .stdout.split('\n')
    .find((l) => l.includes(`slipway application ${appId}`));
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

async function appLog(appId: string): Promise<string> {
  return (await daemon.cli(['logs', '--app', appId])).stdout;
}

/** Checks the example out with a prestart script, so the run phase has a before-start command. */
function withPrestart(example: string): string {
  const dir = checkoutExample(example);
  const pkgPath = join(dir, 'package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
  pkg.scripts.prestart = 'echo "prestart ran as $npm_lifecycle_event"';
  writeFileSync(pkgPath, JSON.stringify(pkg, null, 2));
  commitAll(dir, 'a prestart script');
  return dir;
}

before(async () => {
  daemon = await startDaemon();
  const { gitEnv } = await registerSshKey(daemon);
  const deploy = async (example: string, name: string, env: Record<string, string> = {}) => {
    const dir = withPrestart(example);
    const appId = await createApp(daemon, dir, name, env);
    const result = await pushAndWait(daemon, dir, appId, gitEnv);
    assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
    return { appId, deploymentId: result.id };
  };
  npmApp = (await deploy('node-sigterm', 'no-manager')).appId;
  ({ appId: pnpApp, deploymentId: pnpDeployment } = await deploy('node-yarn-pnp-bin', 'pnp-binary', { NODE_ENV: 'production' }));
});

after(async () => {
  await daemon?.stop();
});

/** The sandbox holds the init and the app's node only, the init being the app's parent. */
function assertOnlyInitAndNode(appId: string): void {
  const processes = processesOfApp(appId);
  const seen = processes.map((p) => `${p.comm} (${p.args})`).join('\n');
  const managers = processes.filter(
    (p) =>
      /^(npm|npx|yarn|pnpm|bun|corepack)\b/.test(p.comm) ||
      /node_modules\/(npm|yarn|pnpm|corepack)\/|\byarn(-[\d.]+)?\.c?js\b/.test(p.args),
  );
  assert.deepEqual(managers, [], `a package manager stays beside the app:\n${seen}`);
  // Node names its main thread (comm shows "MainThread"): the command line tells the app.
  const app = processes.find((p) => /^(\S*\/)?node\s/.test(p.args));
  assert.ok(app, `no node process:\n${seen}`);
  const parent = processes.find((p) => p.pid === app.ppid);
  assert.equal(parent?.comm, 'tini', `the app's parent is the sandbox's init:\n${seen}`);
  assert.equal(processes.length, 2, `only the init and the app:\n${seen}`);
}

/** `slipway stop`, then the app's own words about the SIGTERM it received, and nothing of it left. */
async function stopAndExpectSigterm(appId: string, said: RegExp[]): Promise<void> {
  const stop = await daemon.cli(['stop', '--app', appId]);
  assert.equal(stop.code, 0, stop.stderr);
  const log = await waitUntil(
    'the app to log its SIGTERM and exit',
    async () => {
      const text = await appLog(appId);
      return said.every((words) => words.test(text)) ? text : undefined;
    },
    30_000,
  );
  assert.match(log, /process ended after SIGTERM \(exited with code 0\)/);
  assert.deepEqual(processesOfApp(appId), [], 'nothing of the app is left');
}

test('prestart runs, then the app is the sandbox main process: no npm, yarn, pnpm or bun stays beside it', async () => {
  const response = await getThroughRouter(daemon, `${npmApp}.localhost`);
  assert.equal(response.status, 200, response.body);
  // The app still sees which manager it belongs to, as npm would have told it.
  assert.match(String(JSON.parse(response.body).startedBy), /^npm\/\d+\.\d+\.\d+$/);
  assert.match(await appLog(npmApp), /prestart ran as prestart/);
  assertOnlyInitAndNode(npmApp);
});

test('slipway stop: SIGTERM goes straight to the app, which closes cleanly', async () => {
  await stopAndExpectSigterm(npmApp, [/received SIGTERM, closing the server/, /server closed, exiting/]);
});

test("Yarn Plug'n'Play, start script naming a dependency's binary: prestart, then node runs the binary from Yarn's cache, no Yarn beside it", async () => {
  const response = await getThroughRouter(daemon, `${pnpApp}.localhost`);
  assert.equal(response.status, 200, response.body);
  const body = JSON.parse(response.body);
  assert.equal(body.dependency, 7_200_000, 'the handler loaded its dependency');
  assert.ok(body.pnp, `the app runs under Plug'n'Play: ${response.body}`);
  assert.match(String(body.startedBy), /^yarn\/4\./);
  assert.match(await appLog(pnpApp), /prestart ran as prestart/);
  const log = (await deploymentLog(daemon, pnpApp, pnpDeployment)).join('\n');
  assert.match(
    log,
    /micro is \.slipway-cache\/yarn-berry\/micro-npm-10\.0\.1-[^/]+\.zip\/node_modules\/micro\/[^\s]+: the start command runs it with node/,
    log,
  );
  assertOnlyInitAndNode(pnpApp);
  const app = processesOfApp(pnpApp).find((p) => /^(\S*\/)?node\s/.test(p.args))!;
  assert.match(
    app.args,
    /\.zip\/node_modules\/micro\/\S+ --listen tcp:\/\/0\.0\.0\.0:\d+ handler\.js$/,
    "node runs the binary with the script's arguments",
  );
});

test("Yarn Plug'n'Play binary: slipway stop's SIGTERM reaches the app's own handler", async () => {
  await stopAndExpectSigterm(pnpApp, [/received SIGTERM, closing the server/, /micro: Gracefully shutting down/]);
});
