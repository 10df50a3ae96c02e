import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp, deploymentLog, getThroughRouter, newRelease, pushAndWait, registerSshKey } from '../support/deploy.js';
import { waitUntil } from '../support/wait.js';

let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let dir: string;
let appId: string;
let host: string;

interface Facts {
  release: string;
  instanceId: string;
  instanceNumber: string;
}

async function facts(): Promise<Facts> {
  const r = await getThroughRouter(daemon, host);
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body) as Facts;
}

async function setInstances(count: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ count });
    const req = http.request(
      `${daemon.apiUrl}/v1/apps/${appId}/instances`,
      { method: 'PUT', headers: { authorization: `Bearer ${daemon.adminToken}`, 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Requests through the router on new connections until stopped; counts failures and instances seen. */
interface Seen {
  ok: number;
  failed: string[];
  numbers: Set<string>;
}

/** Requests one after the other until stopped; `seen` is what they met so far. */
function load(): { seen: Seen; stop(): Promise<Seen> } {
  let running = true;
  const seen: Seen = { ok: 0, failed: [], numbers: new Set<string>() };
  const loop = (async () => {
    while (running) {
      try {
        const r = await getThroughRouter(daemon, host);
        if (r.status === 200) {
          seen.ok++;
          seen.numbers.add((JSON.parse(r.body) as Facts).instanceNumber);
        } else seen.failed.push(`status ${r.status}`);
      } catch (e) {
        seen.failed.push((e as Error).message);
      }
    }
  })();
  return {
    seen,
    async stop() {
      running = false;
      await loop;
      return seen;
    },
  };
}

before(async () => {
  daemon = await startDaemon();
  ({ gitEnv } = await registerSshKey(daemon));
  dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'several');
  host = `${appId}.localhost`;
  newRelease(dir, 'one');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
});

after(async () => {
  await daemon?.stop();
});

test('scaling to 3 under load fails no request and every instance gets requests, each with its own number', async () => {
  const traffic = load();
  const scaled = await setInstances(3);
  assert.equal(scaled.status, 200, scaled.body);
  await new Promise((r) => setTimeout(r, 1500));
  const seen = await traffic.stop();
  assert.deepEqual(seen.failed, []);
  assert.ok(seen.ok > 20, `requests went through (${seen.ok})`);
  const numbers = new Set<string>();
  for (let i = 0; i < 30; i++) numbers.add((await facts()).instanceNumber);
  assert.deepEqual([...numbers].sort(), ['0', '1', '2']);
  const status = JSON.parse((await daemon.cli(['status', '--app', appId, '--format', 'json'])).stdout) as {
    instances: Array<{ number: number; state: string; memory_bytes: number }>;
    instance_count: number;
  };
  assert.equal(status.instance_count, 3);
  assert.deepEqual(status.instances.map((i) => i.number).sort(), [0, 1, 2]);
  for (const i of status.instances) {
    assert.equal(i.state, 'running');
    assert.ok(i.memory_bytes > 1024 * 1024, 'memory is reported');
  }
  const human = await daemon.cli(['status', '--app', appId]);
  assert.match(human.stdout, /3 running of 3 wanted/);
});

test('a redeploy starts and checks three new instances before the old ones leave, failing no request', async () => {
  const traffic = load();
  newRelease(dir, 'two');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  const seen = await traffic.stop();
  assert.equal(result.state, 'OK');
  assert.deepEqual(seen.failed, []);
  const log = await deploymentLog(daemon, appId, result.id);
  assert.equal(log.filter((l) => l.includes('[instance] started')).length, 3, log.join('\n'));
  const releases = new Set<string>();
  const numbers = new Set<string>();
  for (let i = 0; i < 30; i++) {
    const f = await facts();
    releases.add(f.release);
    numbers.add(f.instanceNumber);
  }
  assert.deepEqual([...releases], ['two']);
  assert.equal(numbers.size, 3);
});

test('a crashed instance leaves the routing table until it runs again, failing no request meanwhile', async () => {
  const traffic = load();
  const r = await getThroughRouter(daemon, host, '/crash');
  assert.equal(r.status, 200);
  await waitUntil(
    'the crashed instance to leave and come back',
    async () => {
      const status = JSON.parse((await daemon.cli(['status', '--app', appId, '--format', 'json'])).stdout) as {
        instances: Array<{ restarts: number; state: string }>;
      };
      return status.instances.some((i) => i.restarts > 0) && status.instances.every((i) => i.state === 'running') ? true : undefined;
    },
    30_000,
  );
  // Running is not yet routed: it rejoins once its health check passes. From now on the
  // requests must reach all three again.
  traffic.seen.numbers.clear();
  await waitUntil('all three instances to serve again', async () => (traffic.seen.numbers.size === 3 ? true : undefined), 30_000);
  const seen = await traffic.stop();
  assert.deepEqual(seen.failed, []);
});

test('scaling down to one stops the others after they left the router', async () => {
  const traffic = load();
  const scaled = await setInstances(1);
  assert.equal(scaled.status, 200, scaled.body);
  await new Promise((r) => setTimeout(r, 1000));
  const seen = await traffic.stop();
  assert.deepEqual(seen.failed, []);
  for (let i = 0; i < 10; i++) assert.equal((await facts()).instanceNumber, '0');
  await waitUntil(
    'the removed instances to stop',
    async () => {
      const status = JSON.parse((await daemon.cli(['status', '--app', appId, '--format', 'json'])).stdout) as { instances: unknown[] };
      return status.instances.length === 1 ? true : undefined;
    },
    30_000,
  );
  const bad = await setInstances(0);
  assert.equal(bad.status, 400);
  assert.match(bad.body, /whole number from 1 to 40/);
});
