/**
 * Runs the real nginx (Debian's /usr/sbin/nginx) in front of real Node servers on
 * 127.0.0.x loopback addresses. Ports are picked free at runtime.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { NginxRouter } from './nginx-router.js';
import type { HostRoute, RoutingTable, Upstream } from '../../src/router/router.js';
import { childPids, processTitle } from './proc.js';
import { spawn } from 'node:child_process';

interface TestUpstream extends Upstream {
  name: string;
  server: Server;
}

/** An app instance: answers "<name>" with the headers it saw; /slow?ms=N waits first; echoes upgrades. */
async function startUpstream(name: string, address: string): Promise<TestUpstream> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const reply = () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ name, headers: req.headers, path: url.pathname }));
    };
    if (url.pathname === '/slow') setTimeout(reply, Number(url.searchParams.get('ms') ?? '1000'));
    else reply();
  });
  server.on('upgrade', (req, socket: Socket) => {
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${req.headers.upgrade}\r\nConnection: Upgrade\r\nX-Upstream: ${name}\r\n\r\n`,
    );
    socket.on('data', (data) => socket.write(`${name}:${data.toString()}`));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((ok) => server.listen(0, address, ok));
  return { name, address, port: (server.address() as AddressInfo).port, server };
}

async function freePort(host: string): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((ok) => probe.listen(0, host, ok));
  const { port } = probe.address() as AddressInfo;
  await new Promise((ok) => probe.close(ok));
  return port;
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request on its own connection (no client keep-alive), with an explicit Host header. */
function get(port: number, host: string, path = '/', headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((ok, fail) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, headers: { host, ...headers }, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => ok({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', fail);
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', fail);
    req.end();
  });
}

function upstreamName(reply: Reply): string {
  return (JSON.parse(reply.body) as { name: string }).name;
}

function table(entries: Record<string, readonly TestUpstream[]>): RoutingTable {
  return new Map(Object.entries(entries).map(([host, ups]) => [host, route(ups.map(({ address, port }) => ({ address, port })))]));
}

function route(upstreams: Upstream[]): HostRoute {
  return { appId: 'app_test', upstreams, forceHttps: false };
}

describe('NginxRouter with real nginx', () => {
  let workDir: string;
  let router: NginxRouter;
  let port: number;
  let a: TestUpstream;
  let b: TestUpstream;

  before(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'slipway-router-'));
    a = await startUpstream('A', '127.0.0.2');
    b = await startUpstream('B', '127.0.0.3');
    port = await freePort('127.0.0.1');
    router = new NginxRouter({ listenHost: '127.0.0.1', port, workDir, drainTimeoutSeconds: 20 });
    await router.start();
  });

  after(async () => {
    await router?.stop();
    a?.server.close();
    b?.server.close();
    a?.server.closeAllConnections();
    b?.server.closeAllConnections();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  test('routes by exact Host, case-insensitive, port ignored; unknown hosts get the 404 page', async () => {
    await router.apply(table({ 'alpha.test': [a], 'beta.test': [b] }));
    assert.equal(upstreamName(await get(port, 'alpha.test')), 'A');
    assert.equal(upstreamName(await get(port, 'beta.test')), 'B');
    assert.equal(upstreamName(await get(port, `ALPHA.Test:${port}`)), 'A');

    for (const host of ['gamma.test', 'alpha.test.evil', 'sub.alpha.test', '127.0.0.1']) {
      const reply = await get(port, host);
      assert.equal(reply.status, 404, host);
      assert.match(String(reply.headers['content-type']), /^text\/html/);
      assert.match(reply.body, /No app on this slipway answers to the domain name/);
      assert.match(reply.body, /Check the domain/);
    }
  });

  test('a host with no instance gets a 503 page naming it and saying how to deploy', async () => {
    await router.apply(table({ 'idle.test': [] }));
    const reply = await get(port, 'idle.test');
    assert.equal(reply.status, 503);
    assert.equal(reply.headers['retry-after'], '5');
    assert.match(reply.body, /<strong>idle\.test<\/strong> has no running instance/);
    assert.match(reply.body, /git push/);
    assert.match(reply.body, /slipway restart/);
  });

  test('the upstream sees forwarded headers, the original Host and keep-alive friendly Connection', async () => {
    await router.apply(table({ 'alpha.test': [a] }));
    const reply = await get(port, `alpha.test:${port}`, '/path?q=1', { 'x-forwarded-for': '203.0.113.9' });
    const seen = JSON.parse(reply.body) as { headers: IncomingHttpHeaders; path: string };
    assert.equal(seen.path, '/path');
    assert.equal(seen.headers.host, `alpha.test:${port}`);
    assert.equal(seen.headers['x-forwarded-for'], '203.0.113.9, 127.0.0.1');
    assert.equal(seen.headers['x-forwarded-proto'], 'http');
    assert.equal(seen.headers['x-forwarded-host'], 'alpha.test');
    assert.equal(seen.headers['x-forwarded-port'], String(port));
    assert.match(String(seen.headers['x-request-id']), /^[0-9a-f]{32}$/);
    assert.equal(seen.headers.connection, undefined, 'Connection must be empty so the upstream connection is reused');
    assert.equal(reply.headers.server, 'nginx', 'server_tokens off hides the version');
  });

  test('upstream connections are kept alive and reused', async () => {
    await router.apply(table({ 'alpha.test': [a] }));
    const sockets = new Set<string>();
    const track = (socket: Socket) => sockets.add(`${socket.remotePort}`);
    a.server.on('connection', track);
    try {
      for (let i = 0; i < 20; i++) assert.equal((await get(port, 'alpha.test')).status, 200);
    } finally {
      a.server.off('connection', track);
    }
    // Two workers at most open their own pool; without keep-alive this would be 20.
    assert.ok(sockets.size <= 4, `expected a handful of upstream connections, saw ${sockets.size}`);
  });

  test('an HTTP Upgrade (WebSocket handshake) passes through and the stream echoes both ways', async () => {
    await router.apply(table({ 'ws.test': [b] }));
    const socket = await new Promise<Socket>((ok, fail) => {
      const req = request({
        host: '127.0.0.1',
        port,
        agent: false,
        headers: {
          host: 'ws.test',
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        },
      });
      req.on('upgrade', (res, upgraded: Socket) => {
        assert.equal(res.statusCode, 101);
        assert.equal(res.headers['x-upstream'], 'B');
        ok(upgraded);
      });
      req.on('response', (res) => fail(new Error(`expected 101, got ${res.statusCode}`)));
      req.on('error', fail);
      req.end();
    });
    const echoed = new Promise<string>((ok) => socket.once('data', (data) => ok(data.toString())));
    socket.write('ping');
    assert.equal(await echoed, 'B:ping');
    socket.destroy();
  });

  // Clients open a new connection per request. A reload closes nginx's idle client
  // keep-alive connections (nginx trac #1022), so a keep-alive client racing a reload can
  // see a reset on a reused connection and must retry, as browsers do; see README.md.
  test('switching a host from A to B under concurrent load fails no request; after apply() only B answers', async () => {
    await router.apply(table({ 'switch.test': [a] }));
    const results: { status: number; name?: string; error?: string; startedAfterSwitch: boolean }[] = [];
    let switched = false;
    // About 1 s on A, the switch, then 1.5 s on B; bounded even if apply() were slow.
    let stopAt = Date.now() + 20_000;
    const client = async () => {
      while (Date.now() < stopAt) {
        const startedAfterSwitch = switched;
        try {
          const reply = await get(port, 'switch.test');
          results.push({ status: reply.status, name: reply.status === 200 ? upstreamName(reply) : undefined, startedAfterSwitch });
        } catch (error) {
          results.push({ status: 0, error: (error as Error).message, startedAfterSwitch });
        }
      }
    };
    const clients = Array.from({ length: 8 }, client);
    await sleep(1000);
    const switchStarted = Date.now();
    await router.apply(table({ 'switch.test': [b] }));
    switched = true;
    const switchMs = Date.now() - switchStarted;
    stopAt = Math.min(stopAt, Date.now() + 1500);
    await Promise.all(clients);

    const failed = results.filter((r) => r.status !== 200);
    assert.deepEqual(failed, [], `${failed.length} of ${results.length} requests failed`);
    const before = results.filter((r) => !r.startedAfterSwitch);
    const afterSwitch = results.filter((r) => r.startedAfterSwitch);
    assert.ok(
      before.some((r) => r.name === 'A'),
      'A answered before the switch',
    );
    assert.ok(afterSwitch.length > 50, `expected steady load after the switch, got ${afterSwitch.length} requests`);
    assert.ok(switchMs < 5000, `apply() took ${switchMs} ms under load`);
    assert.deepEqual(new Set(afterSwitch.map((r) => r.name)), new Set(['B']));
    assert.ok(results.length > 200, `expected a few hundred requests in 3 s, got ${results.length}`);
  });

  test('a slow request in flight on the old upstream finishes after the switch (drain)', async () => {
    await router.apply(table({ 'drain.test': [a] }));
    const slow = get(port, 'drain.test', '/slow?ms=1500');
    await sleep(300);
    const switchStarted = Date.now();
    await router.apply(table({ 'drain.test': [b] }));
    const switchTook = Date.now() - switchStarted;
    assert.ok(switchTook < 1200, `apply() must not wait for the drain (took ${switchTook} ms)`);
    assert.equal(upstreamName(await get(port, 'drain.test')), 'B');
    const reply = await slow;
    assert.equal(reply.status, 200);
    assert.equal(upstreamName(reply), 'A');
  });

  test('hostile hosts, addresses and ports are refused before they reach nginx', async () => {
    await router.apply(table({ 'alpha.test': [a] }));
    const generation = router.currentGeneration;
    const config = await readFile(join(workDir, 'nginx.conf'), 'utf8');
    const hostileHosts = [
      'evil.test; include /etc/passwd',
      'evil.test;',
      'evil.test\n  location / { return 200; }',
      'evil.test}',
      'evil.test{',
      '$host',
      '~^.*$',
      '*.test',
      'a.*.evil.test',
      '.evil.test',
      'evil.test.',
      'evil test',
      'evil.test:8080',
      '_evil.test',
      '-evil.test',
      'evil-.test',
      'evil..test',
      'évil.test',
      '"evil.test"',
      "'evil.test'",
      'evil.test#',
      'evil.test\\',
      '',
      'a'.repeat(64) + '.test',
      `${'a.'.repeat(127)}test`,
    ];
    for (const host of hostileHosts) {
      await assert.rejects(router.apply(table({ [host]: [a] })), /Router host/, JSON.stringify(host));
    }
    const hostileUpstreams: unknown[] = [
      { address: '127.0.0.1; include /etc/passwd', port: 80 },
      { address: '127.0.0.1:80', port: 80 },
      { address: 'localhost', port: 80 },
      { address: '::1', port: 80 },
      { address: 'unix:/run/x.sock', port: 80 },
      { address: '1.2.3.256', port: 80 },
      { address: '01.2.3.4', port: 80 },
      { address: '127.0.0.1', port: '80' },
      { address: '127.0.0.1', port: '80; x' },
      { address: '127.0.0.1', port: 0 },
      { address: '127.0.0.1', port: 70000 },
      { address: '127.0.0.1', port: 80.5 },
      { address: 2130706433, port: 80 },
      null,
    ];
    for (const upstream of hostileUpstreams) {
      await assert.rejects(
        router.apply(new Map([['fine.test', route([upstream as Upstream])]])),
        /Upstream (address|port)/,
        JSON.stringify(upstream),
      );
    }
    await assert.rejects(router.apply(new Map([['fine.test', route('127.0.0.1' as unknown as Upstream[])]])), /must be a list/);
    await assert.rejects(
      router.apply(
        new Map([
          ['Dup.test', route([])],
          ['dup.test', route([])],
        ]),
      ),
      /twice/,
    );

    assert.equal(router.currentGeneration, generation, 'a refused table changes nothing');
    assert.equal(await readFile(join(workDir, 'nginx.conf'), 'utf8'), config);
    assert.equal(upstreamName(await get(port, 'alpha.test')), 'A');
  });

  test('logs go to the work directory and can be rotated', async () => {
    await router.apply(table({ 'alpha.test': [a] }));
    await get(port, 'alpha.test', '/logged-path');
    // The access log is buffered for up to a second.
    await sleep(1300);
    assert.match(await readFile(join(workDir, 'logs', 'access.log'), 'utf8'), /"alpha\.test" "GET \/logged-path HTTP\/1\.1" 200/);

    await rename(join(workDir, 'logs', 'access.log'), join(workDir, 'logs', 'access.log.1'));
    await router.reopenLogs();
    await get(port, 'alpha.test', '/after-rotation');
    await sleep(1300);
    assert.match(await readFile(join(workDir, 'logs', 'access.log'), 'utf8'), /after-rotation/);
    assert.doesNotMatch(await readFile(join(workDir, 'logs', 'access.log.1'), 'utf8'), /after-rotation/);
  });
});

describe('NginxRouter lifecycle', () => {
  test('stop() ends the master and its workers and frees the port', async () => {
    const workDir = await mkdtemp(join(tmpdir(), 'slipway-router-'));
    const port = await freePort('127.0.0.1');
    const router = new NginxRouter({ listenHost: '127.0.0.1', port, workDir });
    try {
      await router.start();
      const pid = Number((await readFile(join(workDir, 'nginx.pid'), 'utf8')).trim());
      assert.match(String(processTitle(pid)), /nginx: master process/);
      await router.stop();
      assert.equal(processTitle(pid), undefined);
      await assert.rejects(get(port, 'any.test'), /ECONNREFUSED/);
      await assert.rejects(router.apply(new Map()), /not started/);
    } finally {
      await router.stop();
      await rm(workDir, { recursive: true, force: true });
    }
  });

  test('start() fails with a clear message when the port is taken', async () => {
    const workDir = await mkdtemp(join(tmpdir(), 'slipway-router-'));
    const blocker = createNetServer();
    await new Promise<void>((ok) => blocker.listen(0, '127.0.0.1', ok));
    const port = (blocker.address() as AddressInfo).port;
    const router = new NginxRouter({ listenHost: '127.0.0.1', port, workDir, readyTimeoutMs: 5000 });
    try {
      await assert.rejects(router.start(), (error: Error) => {
        assert.match(error.message, /nginx exited/);
        assert.match(error.message, /Address already in use/);
        return true;
      });
    } finally {
      await router.stop();
      blocker.close();
      await rm(workDir, { recursive: true, force: true });
    }
  });
});

test('start() names the missing nginx binary and the package to install', async () => {
  const workDir = await mkdtemp(join(tmpdir(), 'slipway-router-'));
  const router = new NginxRouter({
    listenHost: '127.0.0.1',
    port: await freePort('127.0.0.1'),
    workDir,
    nginxBinary: '/nonexistent/nginx',
  });
  try {
    await assert.rejects(
      router.start(),
      /nginx is not installed or not found \(tried "\/nonexistent\/nginx"\)\. Install the Debian package nginx-light/,
    );
  } finally {
    await router.stop();
    await rm(workDir, { recursive: true, force: true });
  }
});

describe('NginxRouter when slipway dies', () => {
  test('nginx does not outlive a SIGKILLed parent process', async () => {
    const workDir = await mkdtemp(join(tmpdir(), 'slipway-router-'));
    const port = await freePort('127.0.0.1');
    const moduleUrl = new URL('./nginx-router.ts', import.meta.url).href;
    const script =
      `import { NginxRouter } from ${JSON.stringify(moduleUrl)};` +
      `const router = new NginxRouter({ listenHost: "127.0.0.1", port: ${port}, workDir: ${JSON.stringify(workDir)} });` +
      `await router.start(); process.stdout.write("started\\n"); setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((ok, fail) => {
        parent.stdout!.on('data', (data: Buffer) => data.toString().includes('started') && ok());
        parent.once('exit', (code) => fail(new Error(`router parent exited early with ${code}`)));
      });
      const master = Number((await readFile(join(workDir, 'nginx.pid'), 'utf8')).trim());
      const workers = childPids(master);
      assert.ok(workers.length > 0, 'nginx has workers');
      parent.kill('SIGKILL');
      const deadline = Date.now() + 5000;
      while (Date.now() < deadline && [master, ...workers].some((pid) => processTitle(pid) !== undefined)) await sleep(50);
      assert.deepEqual(
        [master, ...workers].filter((pid) => processTitle(pid) !== undefined),
        [],
        'master and workers are gone',
      );
      await assert.rejects(get(port, 'any.test'), /ECONNREFUSED/);
    } finally {
      parent.kill('SIGKILL');
      await rm(workDir, { recursive: true, force: true });
    }
  });
});
