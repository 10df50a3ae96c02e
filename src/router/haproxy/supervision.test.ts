/**
 * The HAProxy router outliving its daemon, against real HAProxy: its supervisor starts it again
 * when it dies, a second router object adopts it after the first let go, and stop() leaves
 * nothing running. One work folder for the whole file; the tests run in order.
 */
import { selfSignedCertificate } from '../../../test/support/self-signed.js';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, createServer, request, type Server } from 'node:http';
import { connect as tlsConnect } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { HaproxyRouter, type HaproxyRouterOptions } from './haproxy-router.js';
import type { AccessRecord, HostRoute, TlsCertificate, Upstream } from '../router.js';
import type { EngineExit } from './supervisor-files.js';
import { freePort } from '../../../test/support/free-port.js';
import { waitUntil } from '../../../test/support/wait.js';

const missing = existsSync('/usr/sbin/haproxy') ? undefined : 'needs HAProxy (Debian package haproxy)';

interface TestUpstream extends Upstream {
  server: Server;
}

async function startUpstream(name: string, address: string): Promise<TestUpstream> {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ name, method: req.method, body }));
    });
  });
  await new Promise<void>((ok) => server.listen(0, address, ok));
  return { server, address, port: (server.address() as AddressInfo).port };
}

function call(
  port: number,
  host: string,
  options: { method?: string; path?: string; body?: string; agent?: Agent; timeoutMs?: number } = {},
): Promise<{ status: number; name: string; body: string }> {
  return new Promise((ok, fail) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path ?? '/',
        agent: options.agent ?? false,
        headers: { host, ...(options.body !== undefined ? { 'content-length': Buffer.byteLength(options.body) } : {}) },
        timeout: options.timeoutMs ?? 10_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          let name = '';
          try {
            name = (JSON.parse(body) as { name: string }).name;
          } catch {
            // Not an upstream's answer (a 404 or 503 page).
          }
          ok({ status: res.statusCode ?? 0, name, body });
        });
        res.on('error', fail);
      },
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', fail);
    req.end(options.body);
  });
}

function makeCertificate(dir: string, names: string[], tag: string): TlsCertificate {
  const { cert, key } = selfSignedCertificate(dir, tag, names, { subject: tag });
  return { names, certificatePem: readFileSync(cert, 'utf8'), privateKeyPem: readFileSync(key, 'utf8') };
}

function servedCommonName(port: number, servername: string): Promise<string> {
  return new Promise((ok, fail) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false }, () => {
      const cn = socket.getPeerCertificate().subject?.CN;
      socket.end();
      ok(String(cn));
    });
    socket.on('error', fail);
  });
}

/** Processes whose command line names the folder (HAProxy, its supervisor). */
function processesIn(folder: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(folder)) pids.push(Number(entry));
    } catch {
      // Ended while we looked.
    }
  }
  return pids;
}

const route = (appId: string, upstream: Upstream): HostRoute => ({
  appId,
  upstreams: [{ address: upstream.address, port: upstream.port }],
  forceHttps: false,
});

describe('HaproxyRouter supervised, outliving the object that started it', { skip: missing }, () => {
  let dir: string;
  let workDir: string;
  let a: TestUpstream;
  let b: TestUpstream;
  let acmeOld: TestUpstream;
  let acmeNew: TestUpstream;
  let port: number;
  let httpsPort: number;
  let router: HaproxyRouter;
  const logs: string[] = [];
  const exits: EngineExit[] = [];
  const records: AccessRecord[] = [];
  const masterPid = () => Number(readFileSync(join(workDir, 'haproxy.pid'), 'utf8'));
  const options = (acme: Upstream): HaproxyRouterOptions => ({
    listenHost: '127.0.0.1',
    port,
    httpsPort,
    workDir,
    acmeChallenge: { address: acme.address, port: acme.port },
    onRequest: (record) => records.push(record),
    log: (line) => logs.push(line),
    onEngineRestart: (exit) => exits.push(exit),
    drainTimeoutSeconds: 5,
    initialSlots: 4,
  });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'slipway-haproxy-supervision-'));
    workDir = join(dir, 'router');
    a = await startUpstream('A', '127.0.0.2');
    b = await startUpstream('B', '127.0.0.3');
    acmeOld = await startUpstream('ACME-old', '127.0.0.4');
    acmeNew = await startUpstream('ACME-new', '127.0.0.4');
    [port, httpsPort] = [await freePort(), await freePort()];
    router = new HaproxyRouter(options(acmeOld));
    await router.start();
    await router.apply(new Map([['alpha.test', route('app_a', a)]]));
    await router.applyCertificates([makeCertificate(dir, ['alpha.test'], 'alpha-1')]);
  });

  after(async () => {
    await router?.stop();
    for (const upstream of [a, b, acmeOld, acmeNew]) {
      upstream?.server.closeAllConnections();
      upstream?.server.close();
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('kill -9 of the HAProxy master: served again within 1 s with the same routes and certificates, and the death is recorded', async (t) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    assert.equal((await call(port, 'alpha.test', { agent })).name, 'A');
    const killed = masterPid();
    process.kill(killed, 'SIGKILL');
    const killedAt = Date.now();
    const servedAgain = async (useAgent: boolean) => {
      for (;;) {
        const reply = await call(port, 'alpha.test', { agent: useAgent ? agent : undefined, timeoutMs: 2000 }).catch(() => undefined);
        if (reply?.name === 'A') return Date.now() - killedAt;
        if (Date.now() - killedAt > 10_000) return Infinity;
        await sleep(5);
      }
    };
    const [keptAlive, fresh] = await Promise.all([servedAgain(true), servedAgain(false)]);
    agent.destroy();
    t.diagnostic(`served again ${keptAlive} ms after the kill on the keep-alive client, ${fresh} ms on new connections`);
    assert.ok(keptAlive < 1000, `a keep-alive client was served again ${keptAlive} ms after the kill`);
    assert.ok(fresh < 1000, `new connections were served again ${fresh} ms after the kill`);
    assert.notEqual(masterPid(), killed, 'another HAProxy serves');
    assert.equal(await servedCommonName(httpsPort, 'alpha.test'), 'alpha-1', 'the same certificate');
    assert.equal((await call(port, 'nobody.test')).status, 404);

    const exit = await waitUntil('the death reported', () => exits.find((e) => e.pid === killed), 10_000);
    assert.equal(exit.signal, 'SIGKILL');
    assert.ok(Math.abs(exit.time.getTime() - killedAt) < 1000);
    assert.ok(
      logs.some((line) => line.includes(`(pid ${killed}) was killed by SIGKILL`)),
      logs.join('\n'),
    );
    const recorded = readFileSync(join(workDir, 'exits.jsonl'), 'utf8').trim().split('\n');
    assert.equal(recorded.length, 1);
    assert.equal(JSON.parse(recorded[0]!).signal, 'SIGKILL');

    // The router goes on changing the HAProxy started again.
    await router.apply(new Map([['alpha.test', route('app_a', b)]]));
    assert.equal((await call(port, 'alpha.test')).name, 'B');
    await router.apply(new Map([['alpha.test', route('app_a', a)]]));
    assert.equal((await call(port, 'alpha.test')).name, 'A');
  });

  test('a change made as HAProxy dies is not lost: the apply succeeds and the HAProxy started again serves it', async () => {
    for (const [upstream, name] of [
      [b, 'B'],
      [a, 'A'],
    ] as const) {
      const killed = masterPid();
      process.kill(killed, 'SIGKILL');
      await router.apply(new Map([['alpha.test', route('app_a', upstream)]]));
      await waitUntil(
        'the change served',
        async () => (await call(port, 'alpha.test', { timeoutMs: 2000 }).catch(() => undefined))?.name === name,
        10_000,
      );
      await waitUntil('the death reported', () => exits.some((e) => e.pid === killed), 10_000);
    }
    // Settled: every request goes to the last table's upstream, whichever HAProxy took the change.
    await waitUntil(
      "twenty answers in a row from the last table's upstream",
      async () => {
        for (let i = 0; i < 20; i++)
          if ((await call(port, 'alpha.test', { timeoutMs: 2000 }).catch(() => undefined))?.name !== 'A') return false;
        return true;
      },
      10_000,
    );
    // And it stays so.
    for (let i = 0; i < 20; i++) assert.equal((await call(port, 'alpha.test')).name, 'A');
  });

  test('a second router on the same folder adopts the first one after it detached: no request fails, routes unchanged, a later apply works', async (t) => {
    const master = masterPid();
    const keepAlive = new Agent({ keepAlive: true, maxSockets: 4 });
    let stop = false;
    const counts = { keepAlive: 0, fresh: 0, post: 0 };
    const failures: string[] = [];
    const client = async (kind: keyof typeof counts) => {
      while (!stop) {
        try {
          const reply =
            kind === 'post'
              ? await call(port, 'alpha.test', { method: 'POST', body: 'order=1', agent: keepAlive })
              : await call(port, 'alpha.test', { agent: kind === 'keepAlive' ? keepAlive : undefined });
          if (reply.status === 200 && reply.name === 'A' && (kind !== 'post' || reply.body.includes('order=1'))) counts[kind]++;
          else failures.push(`${kind}: ${reply.status} ${reply.body.slice(0, 80)}`);
        } catch (error) {
          failures.push(`${kind}: ${(error as Error).message}`);
        }
      }
    };
    const clients = [client('keepAlive'), client('keepAlive'), client('fresh'), client('post')];
    await waitUntil('clients under way', () => counts.keepAlive > 20 && counts.fresh > 5 && counts.post > 5, 10_000);
    await router.detach();
    const before = { ...counts };
    await sleep(200);
    assert.ok(counts.keepAlive > before.keepAlive && counts.fresh > before.fresh, 'served while no router object holds it');

    records.length = 0;
    router = new HaproxyRouter(options(acmeNew));
    await router.start();
    await sleep(300);
    stop = true;
    await Promise.all(clients);
    keepAlive.destroy();
    t.diagnostic(`requests served across the adoption: ${JSON.stringify(counts)}`);
    assert.deepEqual(failures, []);
    assert.ok(counts.post > 10 && counts.fresh > 10, JSON.stringify(counts));
    assert.ok(
      logs.some((line) => line.startsWith('Adopted the router left running')),
      logs.join('\n'),
    );
    assert.equal(masterPid(), master, 'the same HAProxy serves: adopted, not started again');
    assert.equal((await call(port, 'alpha.test')).name, 'A');
    assert.equal(await servedCommonName(httpsPort, 'alpha.test'), 'alpha-1');
    // The adopting object reads the access log and knows which app each backend serves.
    await waitUntil('access records for the adopted routes', () => records.some((r) => r.appId === 'app_a' && r.status === 200), 10_000);
    // The ACME responder moved with the daemon.
    assert.equal((await call(port, 'any.test', { path: '/.well-known/acme-challenge/t' })).name, 'ACME-new');

    await router.apply(
      new Map([
        ['alpha.test', route('app_a', b)],
        ['beta.test', route('app_b', a)],
      ]),
    );
    assert.equal((await call(port, 'alpha.test')).name, 'B');
    assert.equal((await call(port, 'beta.test')).name, 'A');
    await router.applyCertificates([makeCertificate(dir, ['alpha.test'], 'alpha-2')]);
    assert.equal(await servedCommonName(httpsPort, 'alpha.test'), 'alpha-2');
  });

  test('a death while no router object holds it: started again anyway, and told to the next one at its start', async () => {
    await router.detach();
    const killed = masterPid();
    const reported = exits.length;
    process.kill(killed, 'SIGKILL');
    await waitUntil('another HAProxy', () => existsSync(join(workDir, 'haproxy.pid')) && masterPid() !== killed, 10_000);
    await waitUntil(
      'served again',
      async () => (await call(port, 'beta.test', { timeoutMs: 2000 }).catch(() => undefined))?.name === 'A',
      10_000,
    );
    assert.equal((await call(port, 'alpha.test')).name, 'B');
    assert.equal(exits.length, reported, 'nobody was there to tell');

    router = new HaproxyRouter(options(acmeNew));
    await router.start();
    assert.equal(exits.length, reported + 1);
    assert.equal(exits.at(-1)!.pid, killed);
    assert.ok(logs.some((line) => line.includes(`(pid ${killed}) was killed by SIGKILL`)));
    assert.equal(await servedCommonName(httpsPort, 'alpha.test'), 'alpha-2');
  });

  test('kill -9 of the supervisor itself (HAProxy goes with it): the router object starts both again, with the same routes', async (t) => {
    const supervisor = JSON.parse(readFileSync(join(workDir, 'supervisor.pid'), 'utf8')) as { pid: number };
    const master = masterPid();
    process.kill(supervisor.pid, 'SIGKILL');
    const killedAt = Date.now();
    await waitUntil('the old HAProxy gone with its supervisor', () => !existsSync(`/proc/${master}`), 10_000);
    await waitUntil(
      'served again',
      async () => (await call(port, 'alpha.test', { timeoutMs: 2000 }).catch(() => undefined))?.name === 'B',
      15_000,
    );
    t.diagnostic(`served again ${Date.now() - killedAt} ms after the supervisor was killed`);
    assert.ok(
      logs.some((line) => line.includes(`supervisor (pid ${supervisor.pid}) is gone`)),
      logs.join('\n'),
    );
    assert.equal((await call(port, 'beta.test')).name, 'A');
    assert.equal(await servedCommonName(httpsPort, 'alpha.test'), 'alpha-2');
    records.length = 0;
    await call(port, 'beta.test');
    await waitUntil('access records from the new HAProxy', () => records.some((r) => r.appId === 'app_b'), 10_000);
  });

  test('a supervisor running without a state to adopt is stopped, and the router starts afresh', async () => {
    await router.detach();
    const old = JSON.parse(readFileSync(join(workDir, 'supervisor.pid'), 'utf8')) as { pid: number };
    await rm(join(workDir, 'state.json'));
    router = new HaproxyRouter(options(acmeNew));
    await router.start();
    assert.ok(
      logs.some((line) => line.includes(`Stopping the router's supervisor (pid ${old.pid})`)),
      logs.join('\n'),
    );
    assert.equal(existsSync(`/proc/${old.pid}`), false);
    // Afresh: nothing of the earlier routes, until the platform applies them again.
    assert.equal((await call(port, 'alpha.test')).status, 404);
    await router.apply(new Map([['alpha.test', route('app_a', a)]]));
    assert.equal((await call(port, 'alpha.test')).name, 'A');
  });

  test('stop() drains and stops HAProxy and its supervisor: no process is left', async () => {
    assert.ok(processesIn(workDir).length >= 2, 'positive control: the supervisor and HAProxy are found');
    await router.stop();
    assert.deepEqual(processesIn(workDir), []);
    assert.equal(existsSync(join(workDir, 'supervisor.pid')), false);
    await assert.rejects(call(port, 'alpha.test', { timeoutMs: 2000 }), /ECONNREFUSED/);
  });
});
