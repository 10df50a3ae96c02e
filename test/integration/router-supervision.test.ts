/**
 * The router's supervisor under a real daemon: HAProxy killed with -9 serves the deployed app
 * again within a second, whether a daemon runs or not; the daemon says so in its output (the
 * next one, for a death while none ran) and /metrics counts it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp, deploymentLog, getThroughRouter, pushAndWait, registerSshKey } from '../support/deploy.js';
import { freePort } from '../support/free-port.js';

let daemon: TestDaemon;
let metricsPort: number;
let host: string;

const haproxyMaster = () => Number(readFileSync(join(daemon.dataDir, 'router', 'haproxy.pid'), 'utf8'));

/** The master's pid, or undefined while the supervisor rewrites the file. */
function masterIfReadable(): number | undefined {
  try {
    const pid = haproxyMaster();
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Milliseconds from the kill until a new HAProxy (another master in the pid file) answers for
 * the app. The killed master's worker may still answer for a moment on its own: an answer alone
 * does not show that the router was started again.
 */
async function servedByAnotherRouter(killed: number, killedAt: number): Promise<number> {
  while (Date.now() - killedAt < 10_000) {
    const master = masterIfReadable();
    const restarted = master !== undefined && master !== killed;
    const reply = restarted ? await getThroughRouter(daemon, host, '/', {}, 2000).catch(() => undefined) : undefined;
    if (reply?.status === 200) return Date.now() - killedAt;
    await sleep(10);
  }
  return Infinity;
}

async function routerRestarts(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const match = /^slipway_router_restarts_total (\d+)$/m.exec(text);
  assert.ok(match, 'slipway_router_restarts_total is served');
  return Number(match[1]);
}

before(async () => {
  metricsPort = await freePort();
  daemon = await startDaemon(['--metrics-listen', `127.0.0.1:${metricsPort}`]);
  const { gitEnv } = await registerSshKey(daemon);
  const dir = checkoutExample('node-hello');
  const appId = await createApp(daemon, dir, 'supervised');
  host = `${appId}.localhost`;
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
});

after(async () => {
  await daemon?.stop();
});

test('kill -9 of HAProxy: the app answers again within 1 s, the daemon logs the death and /metrics counts it', {
  timeout: 60_000,
}, async (t) => {
  assert.equal((await getThroughRouter(daemon, host)).status, 200);
  assert.equal(await routerRestarts(), 0);
  const killed = haproxyMaster();
  process.kill(killed, 'SIGKILL');
  const killedAt = Date.now();
  const answeredAfter = await servedByAnotherRouter(killed, killedAt);
  t.diagnostic(`the app answered again ${answeredAfter} ms after the kill`);
  assert.ok(answeredAfter < 1000, `answered again ${answeredAfter} ms after the kill`);

  const said = `(pid ${killed}) was killed by SIGKILL`;
  for (let waited = 0; !daemon.output().includes(said) && waited < 10_000; waited += 50) await sleep(50);
  assert.ok(daemon.output().includes(said), daemon.output());
  t.diagnostic(`the daemon logged it ${Date.now() - killedAt} ms after the kill`);
  assert.equal(await routerRestarts(), 1);
  // The daemon goes on routing through the HAProxy started again.
  assert.equal((await getThroughRouter(daemon, host)).status, 200);
});

test('kill -9 of HAProxy while no daemon runs: the app answers again within 1 s, and the next daemon tells and counts it', {
  timeout: 180_000,
}, async (t) => {
  assert.equal(await daemon.terminate(), 0);
  const killed = haproxyMaster();
  process.kill(killed, 'SIGKILL');
  const killedAt = Date.now();
  const answeredAfter = await servedByAnotherRouter(killed, killedAt);
  t.diagnostic(`the app answered again ${answeredAfter} ms after the kill, with no daemon running`);
  assert.ok(answeredAfter < 1000, `answered again ${answeredAfter} ms after the kill`);

  await daemon.restart();
  assert.ok(daemon.output().includes(`(pid ${killed}) was killed by SIGKILL`), daemon.output());
  assert.match(daemon.output(), /Adopted the router left running/);
  assert.equal(await routerRestarts(), 1, 'counted by the daemon that told it');
  assert.equal((await getThroughRouter(daemon, host)).status, 200);
});
