/**
 * Scale to zero on the local backend, driven as a user would: `slipway scale --min-instances 0`
 * with a short idle time, the app goes to sleep (no instance answers, `scale` and `status` say
 * so), and its next requests — on a keep-alive connection opened before the sleep and on a new
 * one, GET and POST — wait at the router while it wakes and are answered 200. A daemon restart
 * keeps it asleep and a request still wakes it; its cron job runs while it sleeps.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, commitAll, createApp, pushAndWait, registerSshKey } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';
import type { AppStatusView, ScaleView } from '../../src/shared/api-types.js';

let daemon: TestDaemon;
let appId: string;
let host: string;

async function scale(): Promise<ScaleView> {
  const shown = await daemon.cli(['scale', '--app', appId, '--format', 'json']);
  assert.equal(shown.code, 0, shown.stderr);
  return JSON.parse(shown.stdout) as ScaleView;
}

async function status(): Promise<AppStatusView> {
  const shown = await daemon.cli(['status', '--app', appId, '--format', 'json']);
  assert.equal(shown.code, 0, shown.stderr);
  return JSON.parse(shown.stdout) as AppStatusView;
}

/** Waits until the app sleeps (the autoscaler saw idle-after without a request); returns since when. */
async function asleep(): Promise<string> {
  return waitUntil('the app to sleep', async () => (await scale()).asleep_since ?? undefined, 60_000);
}

/** One request through the router with the app's Host header; `agent`: a keep-alive client's. */
function send(
  method: 'GET' | 'POST',
  agent: Agent | false,
  body = '',
): Promise<{ status: number; body: string; ms: number; reused: boolean }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: daemon.routerPort,
        path: '/',
        method,
        agent,
        headers: { host, ...(agent ? {} : { connection: 'close' }), 'content-length': Buffer.byteLength(body) },
        timeout: 70_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, ms: Date.now() - started, reused: req.reusedSocket }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

/** Whether anything accepts a connection at the address (an instance's). */
function answers(address: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port, timeout: 2000 });
    socket.on('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

before(async () => {
  daemon = await startDaemon();
  const { gitEnv } = await registerSshKey(daemon);
  const dir = checkoutExample('node-hello');
  mkdirSync(join(dir, 'clevercloud'));
  writeFileSync(join(dir, 'clevercloud', 'cron.json'), `${JSON.stringify(['* * * * * /bin/sh $ROOT/tick.sh'])}\n`);
  writeFileSync(join(dir, 'tick.sh'), 'echo "tick $(date -u +%H:%M:%S)"\n');
  chmodSync(join(dir, 'tick.sh'), 0o755);
  commitAll(dir, 'a cron job');
  appId = await createApp(daemon, dir, 'sleeper');
  host = `${appId}.localhost`;
  const deployed = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(deployed.state, 'OK', deployed.push);
});

after(async () => {
  await daemon?.stop();
});

test('a minimum of 0 with a short idle time: the app sleeps, and says so', async () => {
  const before = await status();
  const instance = before.instance;
  assert.ok(instance, 'an instance serves after the deployment');
  const set = await daemon.cli(['scale', '--app', appId, '--min-instances', '0', '--max-instances', '1', '--autoscaling', 'idle-after=4s']);
  assert.equal(set.code, 0, set.stderr);
  assert.match(set.stdout, /^instances\s+1 \(the autoscaler chooses from 0 to 1\)$/m);
  assert.match(set.stdout, /idle-after=4s/);
  const refused = await daemon.cli(['scale', '--app', appId, '--instances', '0']);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /whole number from 1 to 40, not "0"/);

  const since = await asleep();
  assert.equal((await status()).instances.length, 0);
  await waitUntil('the instance to stop', async () => !(await answers(instance.address, instance.port)), 30_000);
  const printed = await daemon.cli(['scale', '--app', appId]);
  assert.match(
    printed.stdout,
    /^instances\s+0, asleep since .* \(wakes to 1 at its next request\) \(the autoscaler chooses from 0 to 1\)$/m,
  );
  assert.match(printed.stdout, /1 → 0 instances: no request for \d+ s/);
  const shownStatus = await daemon.cli(['status', '--app', appId]);
  assert.match(shownStatus.stdout, /^instances\s+0 running: asleep since/m);
  assert.ok(Date.parse(since) <= Date.now());
});

test('the next requests wait while it wakes and are answered: keep-alive and new connections, GET and POST', async () => {
  // A keep-alive connection opened before the sleep, then left idle through it.
  const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
  // The app sleeps since the test before: this request wakes it, and opens the connection.
  const opened = await send('GET', keepAlive);
  assert.equal(opened.status, 200, opened.body);
  await asleep();

  const [kept, fresh, posted] = await Promise.all([send('GET', keepAlive), send('GET', false), send('POST', false, 'a=1')]);
  for (const r of [kept, fresh, posted]) assert.equal(r.status, 200, r.body);
  assert.ok(kept.reused, 'the keep-alive connection opened before the sleep carried the request');
  assert.equal(JSON.parse(kept.body).appId, appId, "the app's own answer");
  process.stdout.write(`# first request after sleep answered in ${kept.ms} ms (new connection ${fresh.ms} ms, POST ${posted.ms} ms)\n`);
  const again = await send('POST', keepAlive, 'b=2');
  assert.equal(again.status, 200);
  keepAlive.destroy();

  const now = await scale();
  assert.equal(now.asleep_since, null);
  assert.equal((await status()).instances.length, 1);
  const directions = now.decisions.map((d) => `${d.direction} ${d.from}→${d.to} ${d.outcome}: ${d.reason}`);
  assert.ok(directions.includes('up 0→1 done: a request arrived'), directions.join('\n'));
  assert.ok(
    directions.some((d) => /^down 1→0 done: no request for \d+ s$/.test(d)),
    directions.join('\n'),
  );
  const activity = await daemon.cli(['activity', '--app', appId]);
  assert.match(activity.stdout, /0 → 1 instance: a request arrived; the app wakes/);
});

test('a daemon restart keeps it asleep, and a request still wakes it', async () => {
  await asleep();
  assert.equal(await daemon.terminate(), 0);
  await daemon.restart();
  // The restart's restore started nothing for it.
  assert.ok((await scale()).asleep_since);
  assert.equal((await status()).instances.length, 0);
  const woken = await send('GET', false);
  assert.equal(woken.status, 200, woken.body);
  process.stdout.write(`# first request after a daemon restart answered in ${woken.ms} ms\n`);
  assert.equal((await scale()).asleep_since, null);
});

test('its cron job runs while it sleeps, in a sandbox of its own', async () => {
  const since = await asleep();
  const tick = await waitUntil(
    'a cron run while asleep',
    async () => {
      const r = await daemon.cli(['logs', '--app', appId, '-n', '500', '--no-follow']);
      const times = [...r.stdout.matchAll(/tick (\d\d:\d\d:\d\d)/g)].map((m) => m[1]!);
      const sleptAt = since.slice(11, 19);
      return times.find((t) => t > sleptAt);
    },
    90_000,
  );
  assert.ok(tick);
  const now = await scale();
  assert.ok(now.asleep_since, 'the cron run did not wake the app');
  assert.equal((await status()).instances.length, 0);
});
