/**
 * The HAProxy engine against real HAProxy, with Node upstreams on loopback addresses.
 * One router for the whole file (started once); each test applies the table it needs.
 */
import { selfSignedCertificate } from '../../../test/support/self-signed.js';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { Agent, createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import { connect as tlsConnect } from 'node:tls';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HaproxyRouter } from './haproxy-router.js';
import type { AccessRecord, HostRoute, TlsCertificate, Upstream } from '../router.js';
import { freePort } from '../../../test/support/free-port.js';
import { waitUntil } from '../../../test/support/wait.js';

interface TestUpstream extends Upstream {
  server: Server;
}

async function startUpstream(name: string, address: string): Promise<TestUpstream> {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ name, headers: req.headers, url: req.url }));
  });
  await new Promise<void>((ok) => server.listen(0, address, ok));
  return { server, address, port: (server.address() as AddressInfo).port };
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function get(
  port: number,
  host: string,
  options: { method?: string; path?: string; headers?: Record<string, string | string[]>; agent?: Agent; localAddress?: string } = {},
): Promise<Reply> {
  return new Promise((ok, fail) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path ?? '/',
        agent: options.agent ?? false,
        localAddress: options.localAddress,
        headers: { host, ...options.headers },
        timeout: 10_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => ok({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', fail);
      },
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', fail);
    req.end();
  });
}

const nameOf = (reply: Reply) => (JSON.parse(reply.body) as { name: string }).name;
const headersSeen = (reply: Reply) => (JSON.parse(reply.body) as { headers: IncomingHttpHeaders }).headers;
const route = (appId: string, upstreams: Upstream[], forceHttps = false): HostRoute => ({
  appId,
  upstreams: upstreams.map(({ address, port }) => ({ address, port })),
  forceHttps,
});

/** A self-signed certificate for the names, made with openssl. */
function makeCertificate(dir: string, names: string[], tag: string): TlsCertificate {
  const { cert, key } = selfSignedCertificate(dir, tag, names, { subject: tag });
  return {
    names,
    certificatePem: execFileSync('cat', [cert], { encoding: 'utf8' }),
    privateKeyPem: execFileSync('cat', [key], { encoding: 'utf8' }),
  };
}

/** The subject CN of the certificate served for an SNI name. */
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

describe('HaproxyRouter with real HAProxy', () => {
  let workDir: string;
  let router: HaproxyRouter;
  let port: number;
  let httpsPort: number;
  let a: TestUpstream;
  let b: TestUpstream;
  let acme: TestUpstream;
  const records: AccessRecord[] = [];

  before(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'slipway-haproxy-'));
    a = await startUpstream('A', '127.0.0.2');
    b = await startUpstream('B', '127.0.0.3');
    acme = await startUpstream('ACME', '127.0.0.4');
    [port, httpsPort] = [await freePort(), await freePort()];
    router = new HaproxyRouter({
      listenHost: '127.0.0.1',
      port,
      httpsPort,
      workDir: join(workDir, 'router'),
      trustedProxies: ['127.0.0.5/32'],
      acmeChallenge: { address: acme.address, port: acme.port },
      onRequest: (record) => records.push(record),
      drainTimeoutSeconds: 10,
      initialSlots: 2,
    });
    await router.start();
  });

  const MARKER = '/records-caught-up-';
  let markers = 0;
  /**
   * Returns once the access records of every request made so far have arrived, instead of
   * sleeping for them. Records come up to access-log.ts's READ_PAUSE_MS late but in the order HAProxy wrote
   * them, so once the record of one more request (a marker to alpha.test, which must be routed)
   * is in, every earlier one is too. The marker's records are then taken out.
   */
  async function recordsCaughtUp(): Promise<void> {
    const path = `${MARKER}${++markers}`;
    assert.equal((await get(port, 'alpha.test', { path })).status, 200, 'the marker request is answered');
    await waitUntil(`the access record of ${path}`, () => records.some((r) => r.path === path), 10_000);
    for (let i = records.length - 1; i >= 0; i--) if (records[i]!.path.startsWith(MARKER)) records.splice(i, 1);
  }

  after(async () => {
    await router?.stop();
    for (const upstream of [a, b, acme]) {
      upstream?.server.closeAllConnections();
      upstream?.server.close();
    }
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  test('exact hosts, wildcards for deeper names without their own entry, 404 for unknown hosts, 503 for an app with nothing running', async () => {
    await router.apply(
      new Map([
        ['alpha.test', route('app_a', [a])],
        ['*.alpha.test', route('app_b', [b])],
        ['exact.alpha.test', route('app_a', [a])],
        ['idle.test', route('app_idle', [])],
      ]),
    );
    assert.equal(nameOf(await get(port, 'alpha.test')), 'A');
    assert.equal(nameOf(await get(port, `ALPHA.test:${port}`)), 'A', 'case and port do not matter');
    assert.equal(nameOf(await get(port, 'x.alpha.test')), 'B');
    assert.equal(nameOf(await get(port, 'deep.x.alpha.test')), 'B');
    assert.equal(nameOf(await get(port, 'exact.alpha.test')), 'A', 'an exact entry wins over the wildcard');
    const unknown = await get(port, 'nobody.test');
    assert.equal(unknown.status, 404);
    assert.match(unknown.body, /no such app/);
    const idle = await get(port, 'idle.test');
    assert.equal(idle.status, 503);
    assert.match(idle.body, /no running instance/);
    assert.equal(idle.headers['retry-after'], '5');
  });

  test('one access record per request routed to an app, none for the 404 page', async () => {
    await router.apply(
      new Map([
        ['alpha.test', route('app_a', [a])],
        ['idle.test', route('app_idle', [])],
      ]),
    );
    // Records arrive in batches, late: let the earlier tests' come in first.
    await recordsCaughtUp();
    records.length = 0;
    await get(port, 'alpha.test', { path: '/hello?x=1' });
    await get(port, 'nobody.test');
    await get(port, 'idle.test');
    // Every record of the three requests is in: the 404 page's would be among them.
    await recordsCaughtUp();
    assert.equal(records.length, 2, JSON.stringify(records));
    const [hit, idle] = records;
    assert.equal(hit!.appId, 'app_a');
    assert.equal(hit!.host, 'alpha.test');
    assert.equal(hit!.method, 'GET');
    assert.equal(hit!.path, '/hello?x=1', 'the path with its query, as requested');
    assert.equal(hit!.status, 200);
    assert.equal(hit!.client, '127.0.0.1');
    assert.equal(hit!.instance, `${a.address}:${a.port}`);
    assert.equal(hit!.tls, false);
    assert.ok(hit!.bytes > 0 && hit!.durationMs >= 0 && Math.abs(hit!.time.getTime() - Date.now()) < 5000);
    assert.equal(idle!.appId, 'app_idle');
    assert.equal(idle!.status, 503);
    assert.equal(idle!.instance, '');
  });

  test('forwarded headers: replaced for anyone, kept and extended for a trusted proxy', async () => {
    await router.apply(new Map([['alpha.test', route('app_a', [a])]]));
    const spoof = { 'x-forwarded-for': '6.6.6.6', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.test' };
    // Two copies of a header and the ones the trusted case does not send: every copy is replaced.
    const extra = { 'x-forwarded-proto': ['https', 'wss'], 'x-forwarded-port': '1', forwarded: 'for=6.6.6.6' };
    const untrusted = headersSeen(await get(port, 'alpha.test', { headers: { ...spoof, ...extra } }));
    assert.equal(untrusted['x-forwarded-for'], '127.0.0.1');
    assert.equal(untrusted['x-forwarded-proto'], 'http');
    assert.equal(untrusted['x-forwarded-host'], 'alpha.test');
    assert.equal(untrusted['x-forwarded-port'], String(port));
    assert.equal(untrusted.forwarded, undefined);
    assert.equal(untrusted.host, 'alpha.test');
    assert.match(String(untrusted['x-request-id']), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const kept = headersSeen(await get(port, 'alpha.test', { headers: { 'x-request-id': 'abc-1' } }));
    assert.equal(kept['x-request-id'], 'abc-1');
    const trusted = headersSeen(await get(port, 'alpha.test', { headers: spoof, localAddress: '127.0.0.5' }));
    assert.equal(trusted['x-forwarded-for'], '6.6.6.6, 127.0.0.5');
    assert.equal(trusted['x-forwarded-proto'], 'https');
    assert.equal(trusted['x-forwarded-host'], 'evil.test');
    const trustedBare = headersSeen(await get(port, 'alpha.test', { localAddress: '127.0.0.5' }));
    assert.equal(trustedBare['x-forwarded-for'], '127.0.0.5');
    assert.equal(trustedBare['x-forwarded-proto'], 'http');
  });

  test('ACME challenges go to the responder for any host, even one forced to HTTPS', async () => {
    await router.apply(new Map([['alpha.test', route('app_a', [a], true)]]));
    const reply = await get(port, 'unknown.test', { path: '/.well-known/acme-challenge/token-1' });
    assert.equal(nameOf(reply), 'ACME');
    assert.equal((JSON.parse(reply.body) as { url: string }).url, '/.well-known/acme-challenge/token-1');
    assert.equal(nameOf(await get(port, 'alpha.test', { path: '/.well-known/acme-challenge/t' })), 'ACME');
  });

  test('force-https answers plain HTTP with a 301 to the same URL on the HTTPS port', async () => {
    await router.apply(
      new Map([
        ['alpha.test', route('app_a', [a], true)],
        ['*.beta.test', route('app_b', [b], false)],
      ]),
    );
    const reply = await get(port, `alpha.test:${port}`, { path: '/a/b?c=d' });
    assert.equal(reply.status, 301);
    assert.equal(reply.headers.location, `https://alpha.test:${httpsPort}/a/b?c=d`);
    assert.equal(nameOf(await get(port, 'x.beta.test')), 'B');
  });

  test('HTTPS with HTTP/2 and HTTP/1.1, certificates chosen by SNI, a default one for other names, swapped under an open HTTP/2 session', async () => {
    await router.apply(
      new Map([
        ['alpha.test', route('app_a', [a], true)],
        ['x.beta.test', route('app_b', [b])],
      ]),
    );
    assert.equal(await servedCommonName(httpsPort, 'alpha.test'), 'slipway-default.invalid');
    await router.applyCertificates([
      makeCertificate(workDir, ['alpha.test'], 'alpha-1'),
      makeCertificate(workDir, ['*.beta.test'], 'beta-1'),
    ]);
    assert.equal(await servedCommonName(httpsPort, 'alpha.test'), 'alpha-1');
    assert.equal(await servedCommonName(httpsPort, 'x.beta.test'), 'beta-1');
    assert.equal(await servedCommonName(httpsPort, 'other.test'), 'slipway-default.invalid');
    const keyMode = (await stat(join(workDir, 'router', 'certs'))).mode & 0o777;
    assert.equal(keyMode, 0o700);

    const session = http2Connect(`https://127.0.0.1:${httpsPort}`, { servername: 'alpha.test', rejectUnauthorized: false });
    const h2get = () =>
      new Promise<{ status: number; body: string }>((ok, fail) => {
        const stream = session.request({ ':path': '/h2', ':authority': 'alpha.test' });
        let body = '';
        let status = 0;
        stream.setEncoding('utf8');
        stream.on('response', (headers) => (status = Number(headers[':status'])));
        stream.on('data', (chunk: string) => (body += chunk));
        stream.on('end', () => ok({ status, body }));
        stream.on('error', fail);
      });
    const first = await h2get();
    assert.equal(first.status, 200);
    const seen = JSON.parse(first.body) as { name: string; headers: IncomingHttpHeaders };
    assert.equal(seen.name, 'A');
    assert.equal(seen.headers['x-forwarded-proto'], 'https', 'no redirect and https over the TLS listener');
    await router.applyCertificates([
      makeCertificate(workDir, ['alpha.test'], 'alpha-2'),
      makeCertificate(workDir, ['*.beta.test'], 'beta-1'),
    ]);
    assert.equal((await h2get()).status, 200, 'the open HTTP/2 session keeps working after the renewal');
    session.close();
    assert.equal(await servedCommonName(httpsPort, 'alpha.test'), 'alpha-2');
    await router.applyCertificates([]);
    assert.equal(await servedCommonName(httpsPort, 'alpha.test'), 'slipway-default.invalid');
    await assert.rejects(router.applyCertificates([{ names: ['alpha.test'], certificatePem: 'nope', privateKeyPem: 'nope' }]), /not PEM/);
    const mismatched = makeCertificate(workDir, ['alpha.test'], 'm1');
    await assert.rejects(
      router.applyCertificates([{ ...mismatched, privateKeyPem: makeCertificate(workDir, ['alpha.test'], 'm2').privateKeyPem }]),
      /does not belong/,
    );
  });

  test('a certificate the router refuses keeps neither the others from loading nor its names from what they had', async () => {
    await router.applyCertificates([makeCertificate(workDir, ['gamma.test'], 'gamma-1')]);
    const indented = makeCertificate(workDir, ['gamma.test'], 'gamma-2');
    indented.certificatePem = indented.certificatePem.replace(/^/gm, '  ');
    const weakDir = await mkdtemp(join(tmpdir(), 'slipway-weak-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:1024',
        '-nodes',
        '-keyout',
        join(weakDir, 'k'),
        '-out',
        join(weakDir, 'c'),
        '-days',
        '2',
        '-subj',
        '/CN=weak-1',
        '-addext',
        'subjectAltName=DNS:weak.test',
      ],
      { stdio: 'ignore' },
    );
    const weak = {
      names: ['weak.test'],
      certificatePem: await readFile(join(weakDir, 'c'), 'utf8'),
      privateKeyPem: await readFile(join(weakDir, 'k'), 'utf8'),
    };
    await assert.rejects(
      router.applyCertificates([
        makeCertificate(workDir, ['alpha.test'], 'alpha-3'),
        indented,
        weak,
        makeCertificate(workDir, ['delta.test'], 'delta-1'),
      ]),
      (error: Error & { refusedNames?: string[] }) =>
        /gamma\.test/.test(error.message) &&
        /weak\.test/.test(error.message) &&
        error.refusedNames?.sort().join() === 'gamma.test,weak.test',
    );
    assert.equal(await servedCommonName(httpsPort, 'alpha.test'), 'alpha-3', 'before the refused ones');
    assert.equal(await servedCommonName(httpsPort, 'delta.test'), 'delta-1', 'after the refused ones');
    assert.equal(await servedCommonName(httpsPort, 'gamma.test'), 'gamma-1', 'a refused renewal keeps the certificate served before');
    assert.equal(await servedCommonName(httpsPort, 'weak.test'), 'slipway-default.invalid', 'nothing half-loaded');
    const listed = await readFile(join(workDir, 'router', 'certificates.list'), 'utf8');
    assert.equal(listed.trim().split('\n').length, 4, `the default, alpha, gamma and delta:\n${listed}`);
    await router.applyCertificates([]);
    await rm(weakDir, { recursive: true, force: true });
  });

  test('connections to the app are reused from request to request, not opened for each one', async () => {
    const counted = await startUpstream('C', '127.0.0.6');
    let connections = 0;
    counted.server.on('connection', () => connections++);
    try {
      await router.apply(new Map([['alpha.test', route('app_a', [counted])]]));
      await recordsCaughtUp();
      records.length = 0;
      // The marker's connection is not one of the 40 requests'.
      connections = 0;
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      for (let i = 0; i < 40; i++) assert.equal(nameOf(await get(port, 'alpha.test', { agent })), 'C');
      agent.destroy();
      // HAProxy keeps a connection per thread at most here; one per request would be 40.
      assert.ok(connections <= 4, `${connections} upstream connections for 40 requests`);
      // The access lines arrive many per read: every one of them is a record, none is cut.
      await recordsCaughtUp();
      assert.equal(records.filter((r) => r.instance === `${counted.address}:${counted.port}` && r.status === 200).length, 40);
      assert.equal(records.length, 40);
    } finally {
      await router.apply(new Map([['alpha.test', route('app_a', [a])]]));
      counted.server.closeAllConnections();
      counted.server.close();
    }
  });

  test('a request the app drops unanswered is tried again only when repeating it is harmless: GET yes, POST never', async () => {
    // An app that reads each request and closes the connection without a word, as a crash does.
    let attempts = 0;
    const silent = createTcpServer((socket) => {
      socket.once('data', () => {
        attempts++;
        socket.destroy();
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((ok) => silent.listen(0, '127.0.0.7', ok));
    try {
      await router.apply(
        new Map([['alpha.test', route('app_a', [{ address: '127.0.0.7', port: (silent.address() as AddressInfo).port }])]]),
      );
      const viaGet = await get(port, 'alpha.test', { path: '/read' });
      const triedForGet = attempts;
      attempts = 0;
      const viaPost = await get(port, 'alpha.test', { method: 'POST', path: '/order', headers: { 'content-length': '0' } });
      assert.equal(viaGet.status, 502);
      assert.equal(viaPost.status, 502);
      assert.ok(triedForGet > 1, `a GET the app dropped was sent ${triedForGet} time(s): it should have been tried again`);
      assert.equal(attempts, 1, 'a POST the app dropped must not be sent again');
    } finally {
      await router.apply(new Map([['alpha.test', route('app_a', [a])]]));
      silent.close();
    }
  });

  test("a held app's requests wait at the router, GET and POST, then go to the instance routed at the release", async () => {
    await router.apply(
      new Map([
        ['alpha.test', route('app_a', [a])],
        ['beta.test', route('app_b', [a])],
      ]),
    );
    const agent = new Agent({ keepAlive: true });
    try {
      assert.equal(nameOf(await get(port, 'alpha.test', { agent })), 'A', 'a keep-alive connection open before the hold');
      await router.hold('app_a');
      const answers: Array<Reply | Error> = [];
      const waiting = [
        get(port, 'alpha.test', { agent }),
        get(port, 'alpha.test', { method: 'POST', path: '/write' }),
        get(port, 'alpha.test'),
      ].map((p) =>
        p.then(
          (r) => answers.push(r),
          (e: Error) => answers.push(e),
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 700));
      assert.equal(answers.length, 0, 'nothing was answered while held');
      // The app moves to another instance meanwhile; another app is not held.
      await router.apply(
        new Map([
          ['alpha.test', route('app_a', [b])],
          ['beta.test', route('app_b', [a])],
        ]),
      );
      assert.equal(nameOf(await get(port, 'beta.test')), 'A');
      assert.equal(answers.length, 0, 'still held');
      await router.release('app_a');
      await Promise.all(waiting);
      assert.deepEqual(
        answers.map((r) => (r instanceof Error ? r.message : `${r.status} ${nameOf(r)}`)),
        ['200 B', '200 B', '200 B'],
        'every held request answered, by the instance routed when the hold ended',
      );
    } finally {
      agent.destroy();
      await router.release('app_a');
      await router.apply(new Map([['alpha.test', route('app_a', [a])]]));
    }
  });

  test('a sleeping app: its requests wait, the first marks it for the wake, and they go on at its wake', async () => {
    // Asleep with no instance at all, as after a sleep: the backend has no server.
    await router.apply(new Map([['alpha.test', route('app_a', [])]]));
    await router.sleep('app_a');
    try {
      assert.deepEqual([...((await router.wakeRequests()) ?? [])], [], 'no request yet');
      const answers: Array<Reply | Error> = [];
      const waiting = [get(port, 'alpha.test'), get(port, 'alpha.test', { method: 'POST', path: '/write' })].map((p) =>
        p.then(
          (r) => answers.push(r),
          (e: Error) => answers.push(e),
        ),
      );
      await waitUntil('the held request to mark the app', async () => (await router.wakeRequests())?.has('app_a') || undefined, 5000);
      assert.equal(answers.length, 0, 'held, not refused');
      // A plain hold of another app rewrites the map meanwhile: the mark comes back at the next look.
      await router.hold('app_b');
      await router.release('app_b');
      await waitUntil('the mark to come back', async () => (await router.wakeRequests())?.has('app_a') || undefined, 5000);
      await router.apply(new Map([['alpha.test', route('app_a', [b])]]));
      await router.wake('app_a');
      await Promise.all(waiting);
      assert.deepEqual(
        answers.map((r) => (r instanceof Error ? r.message : `${r.status} ${nameOf(r)}`)),
        ['200 B', '200 B'],
      );
      assert.deepEqual([...((await router.wakeRequests()) ?? [])], []);
    } finally {
      await router.wake('app_a');
      await router.apply(new Map([['alpha.test', route('app_a', [a])]]));
    }
  });

  test('switching upstreams and outgrowing the backends (a reload) under keep-alive load fail no request', async () => {
    await router.apply(new Map([['alpha.test', route('app_a', [a])]]));
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    let stop = false;
    let ok = 0;
    const failures: string[] = [];
    const client = async () => {
      while (!stop) {
        try {
          const reply = await get(port, 'alpha.test', { agent });
          if (reply.status === 200) ok++;
          else failures.push(`status ${reply.status}`);
        } catch (error) {
          failures.push((error as Error).message);
        }
      }
    };
    const clients = Array.from({ length: 8 }, client);
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const before = ok;
      await waitUntil(`the load clients answered between switches (${i + 1} of 6)`, () => ok >= before + 20, 10_000);
      const next = i % 2 === 0 ? b : a;
      await router.apply(new Map([['alpha.test', route('app_a', [next])]]));
      seen.add(nameOf(await get(port, 'alpha.test')));
    }
    // Three apps on two backends: the engine reloads HAProxy with more.
    await router.apply(
      new Map([
        ['alpha.test', route('app_a', [a])],
        ['one.test', route('app_1', [b])],
        ['two.test', route('app_2', [b])],
      ]),
    );
    records.length = 0;
    assert.equal(nameOf(await get(port, 'two.test')), 'B');
    await waitUntil('an access record from the reloaded HAProxy', () => records.some((r) => r.appId === 'app_2'), 10_000);
    const afterReload = ok;
    await waitUntil('the load clients answered after the reload', () => ok >= afterReload + 50, 10_000);
    stop = true;
    await Promise.all(clients);
    agent.destroy();
    assert.deepEqual(failures, []);
    assert.ok(ok > 100, `only ${ok} requests`);
    // The reloaded worker writes on the same pipe, and the daemon kept up: nothing dropped, counted as 0.
    assert.equal(await router.droppedAccessRecords(), 0);
    assert.deepEqual([...seen].sort(), ['A', 'B']);
    await router.settled();
    const config = await readFile(join(workDir, 'router', 'haproxy.cfg'), 'utf8');
    assert.match(config, /backend app3\n/);
  });
});
