import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp, deploymentLog, getThroughRouter, newRelease, pushAndWait, registerSshKey } from '../support/deploy.js';
import { steadyLoad } from '../support/steady-load.js';
import { waitUntil } from '../support/wait.js';
import { execFileSync, spawn } from 'node:child_process';
import { SLIPWAY_BIN } from '../support/cli.js';

// The data plane outlives the daemon: SIGTERM, SIGINT and kill -9 of the daemon leave the router,
// the instances and their workers serving, and the next daemon adopts them as they run; only
// `slipway system stop` stops them.
let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let dir: string;
let appId: string;
let host: string;

interface Facts {
  release: string;
  instanceId: string;
}

const facts = async (): Promise<Facts> => {
  const answer = await getThroughRouter(daemon, host);
  assert.equal(answer.status, 200, answer.body);
  return JSON.parse(answer.body) as Facts;
};

/** The monitors (conmon) of this daemon's sandboxes, by pid. */
function monitorsOfDataFolder(): number[] {
  const marker = `${daemon.dataDir}/sandboxes/`;
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const cmdline = readFileSync(join('/proc', pid, 'cmdline'), 'utf8');
        return cmdline.startsWith('/usr/bin/conmon\0') && cmdline.includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

before(async () => {
  daemon = await startDaemon();
  ({ gitEnv } = await registerSshKey(daemon));
  dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'outlives', {
    CC_WORKER_COMMAND: `node -e "setInterval(() => console.log('worker tick ' + Date.now()), 300)"`,
  });
  host = `${appId}.localhost`;
  newRelease(dir, 'r1');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
});

after(async () => {
  await daemon?.stop();
});

for (const how of ['SIGTERM', 'SIGINT', 'SIGKILL'] as const) {
  test(`${how} of the daemon: the app serves throughout (keep-alive, HTTP/2, new connections, POSTs) and the next daemon adopts the same instance and worker`, {
    timeout: 180_000,
  }, async () => {
    const before = await facts();
    const monitors = monitorsOfDataFolder();
    assert.equal(monitors.length, 2, 'one monitor for the instance, one for its worker');
    // Apart from the daemon's own control group, so a service manager stopping it spares them.
    const haproxy = Number(readFileSync(join(daemon.dataDir, 'router', 'haproxy.pid'), 'utf8'));
    for (const pid of [...monitors, haproxy]) {
      assert.match(
        readFileSync(`/proc/${pid}/cgroup`, 'utf8'),
        /^0::\/slipway\d+-data-plane$/m,
        `process ${pid} is in the data plane's group`,
      );
    }
    assert.doesNotMatch(readFileSync(`/proc/${daemon.pid()}/cgroup`, 'utf8'), /data-plane/, 'the daemon is not');
    const load = steadyLoad(daemon, host);
    await sleep(500);
    if (how === 'SIGKILL') await daemon.kill();
    else assert.equal(await daemon.terminate(how), 0);
    // Nobody runs the control plane now: the data plane alone serves.
    await sleep(1500);
    assert.deepEqual(monitorsOfDataFolder().sort(), [...monitors].sort(), 'the monitors outlived the daemon');
    await daemon.restart();
    await sleep(1000);
    const { failures, failureCount, counts } = await load.stop();
    assert.deepEqual(failures, [], `failed requests: ${failureCount}`);
    for (const [kind, count] of Object.entries(counts)) assert.ok(count > 10, `${kind}: only ${count} requests`);
    const afterwards = await facts();
    assert.equal(afterwards.instanceId, before.instanceId, 'the same instance serves: adopted, not started again');
    assert.deepEqual(monitorsOfDataFolder().sort(), [...monitors].sort(), 'no sandbox was started again');
    assert.match(daemon.output(), /Adopted 1 running instance\(s\) of outlives/);
    // The new daemon reads the worker's output again.
    const since = Date.now();
    let seen = false;
    for (let i = 0; i < 50 && !seen; i++) {
      const logs = await daemon.cli(['logs', '--app', appId, '-n', '200', '--format', 'json']);
      seen = logs.stdout
        .split('\n')
        .filter(Boolean)
        .some((line) => {
          const tick = /worker tick (\d+)/.exec(line);
          return tick !== null && Number(tick[1]) > since;
        });
      if (!seen) await sleep(200);
    }
    assert.ok(seen, "the worker's lines printed after the restart reach the app's log");
  });
}

test('SIGTERM with a `slipway run` session open: the daemon stops at once, the session ends, the app serves on', {
  timeout: 120_000,
}, async () => {
  // The instance's and the worker's monitors (and any other this daemon's sandboxes hold) before the command's.
  const monitorsBefore = monitorsOfDataFolder().length;
  const session = spawn(process.execPath, [SLIPWAY_BIN, 'run', '--app', appId, '--', 'sleep', '119'], {
    env: {
      ...process.env,
      XDG_CONFIG_HOME: join(daemon.dataDir, 'client-config'),
      SLIPWAY_URL: daemon.apiUrl,
      SLIPWAY_TOKEN: daemon.adminToken,
    },
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  const sessionEnded = new Promise<void>((resolve) => session.once('exit', () => resolve()));
  await waitUntil('the one-off command to run', async () => (monitorsOfDataFolder().length > monitorsBefore ? true : undefined), 60_000);
  const started = Date.now();
  assert.equal(await daemon.terminate(), 0);
  assert.ok(Date.now() - started < 15_000, `the daemon stopped after ${Date.now() - started} ms`);
  await sessionEnded;
  assert.equal((await facts()).release, 'r1', 'the app serves while no daemon runs');
  await daemon.restart();
});

test('a redeploy after an adoption replaces the adopted instance and stops it', { timeout: 180_000 }, async () => {
  const before = await facts();
  const load = steadyLoad(daemon, host);
  newRelease(dir, 'r2');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
  const { failures, failureCount } = await load.stop();
  assert.deepEqual(failures, [], `failed requests: ${failureCount}`);
  const afterwards = await facts();
  assert.equal(afterwards.release, 'r2');
  assert.notEqual(afterwards.instanceId, before.instanceId);
  let monitors = monitorsOfDataFolder();
  for (let i = 0; i < 100 && monitors.length !== 2; i++) {
    await sleep(200);
    monitors = monitorsOfDataFolder();
  }
  assert.equal(monitors.length, 2, 'the adopted instance and its worker stopped after the switch');
});

test('a start on another --subnet moves the instances there, new ones first, and retires the old network', {
  timeout: 180_000,
}, async () => {
  const oldSubnet = daemon.subnet;
  const oldBridge = `slipway${oldSubnet.split('.')[1]}`;
  const before = await facts();
  const load = steadyLoad(daemon, host);
  await sleep(500);
  assert.equal(await daemon.terminate(), 0);
  const second = Number(oldSubnet.split('.')[1]);
  const newSubnet = `10.${second === 254 ? 253 : second + 1}.0.0/16`;
  await daemon.restart({ subnet: newSubnet });
  const moved = await waitUntil('the app served from the new subnet', async () => {
    const now = await facts();
    return now.instanceId !== before.instanceId ? now : undefined;
  });
  await sleep(500);
  const { failures, failureCount } = await load.stop();
  assert.deepEqual(failures, [], `failed requests while the app moved: ${failureCount}`);
  const status = JSON.parse((await daemon.cli(['status', '--app', appId, '--format', 'json'])).stdout) as {
    instances: Array<{ id: string; address?: string }>;
  };
  assert.ok(status.instances.some((i) => i.id === moved.instanceId));
  await waitUntil('the old bridge and firewall table to be gone', async () => {
    const links = execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' });
    const tables = execFileSync('nft', ['list', 'tables'], { encoding: 'utf8' });
    return !new RegExp(`: ${oldBridge}[:@]`).test(links) && !new RegExp(`^table inet ${oldBridge}$`, 'm').test(tables) ? true : undefined;
  });
  assert.match(daemon.output(), /Restored outlives/);
});

test('slipway system stop drains and stops the apps, workers, add-on servers and the router, and says so', {
  timeout: 180_000,
}, async () => {
  const serving = (await facts()).release;
  const stopped = await daemon.cli(['system', 'stop', '--yes'], { timeoutMs: 120_000 });
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.match(stopped.stdout, /Stopped 1 app\(s\) \(outlives\): 1 instance\(s\)/);
  assert.match(stopped.stdout, /Router: drained and stopped/);
  let monitors = monitorsOfDataFolder();
  for (let i = 0; i < 50 && monitors.length > 0; i++) {
    await sleep(100);
    monitors = monitorsOfDataFolder();
  }
  assert.deepEqual(monitors, [], 'no sandbox runs after a system stop');
  await assert.rejects(getThroughRouter(daemon, host, '/', {}, 2000), 'the router no longer answers');
  await daemon.restart();
  assert.equal((await facts()).release, serving, 'the next start serves the app again');
});

test('system stop asks before it stops, and a refusal changes nothing', async () => {
  const asked = await daemon.cli(['system', 'stop']);
  assert.notEqual(asked.code, 0);
  assert.match(asked.stderr, /Pass --yes to confirm/);
  assert.match((await facts()).release, /^r\d$/, 'the app still serves');
});
