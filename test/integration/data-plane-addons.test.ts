import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutFixture, createApp, deploymentLog, pushAndWait, registerSshKey } from '../support/deploy.js';
import { freePort } from '../support/free-port.js';

// An instance that outlives the daemon keeps reaching its add-ons while the next daemon starts:
// the firewall's table is replaced at start with the instances and their add-on access carried
// over, never a moment without them. The app opens a new connection to each add-on server on
// every request.
let daemon: TestDaemon;
let appId: string;

/** One probe through the router: the instance opened a new connection to each add-on. */
const probe = () =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: daemon.routerPort,
        path: '/probe',
        headers: { host: `${appId}.localhost` },
        agent: false,
        timeout: 10_000,
      },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });

before(async () => {
  process.env.SLIPWAY_POSTGRES_PORT = String(await freePort());
  const redisPort = await freePort();
  process.env.SLIPWAY_REDIS_PORTS = `${redisPort}-${redisPort}`;
  daemon = await startDaemon();
  const { gitEnv } = await registerSshKey(daemon);
  const dir = checkoutFixture('addon-probe');
  appId = await createApp(daemon, dir, 'prober');
  for (const [provider, name] of [
    ['postgresql', 'db'],
    ['redis', 'cache'],
  ] as const) {
    const created = await daemon.cli(['addon', 'create', provider, name, '--link', appId]);
    assert.equal(created.code, 0, created.stderr);
  }
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
});

after(async () => {
  await daemon?.stop();
});

for (const how of ['SIGTERM', 'SIGKILL'] as const) {
  test(`across a daemon ${how} and start, every new connection from the instance to its add-ons gets through`, {
    timeout: 120_000,
  }, async () => {
    const outcomes: string[] = [];
    let ok = 0;
    let running = true;
    const loop = (async () => {
      while (running) {
        try {
          const answer = await probe();
          if (answer.status === 200) ok++;
          else outcomes.push(`status ${answer.status}: ${answer.body}`);
        } catch (error) {
          outcomes.push((error as Error).message);
        }
        await sleep(50);
      }
    })();
    await sleep(500);
    const before = ok;
    assert.ok(before > 0, 'probes get through before the restart');
    if (how === 'SIGKILL') await daemon.kill();
    else await daemon.terminate();
    await daemon.restart();
    await sleep(1500);
    running = false;
    await loop;
    assert.deepEqual(outcomes, [], 'no probe failed');
    assert.ok(ok > before + 10, `probes went on through the restart (${ok - before} after it began)`);
  });
}
