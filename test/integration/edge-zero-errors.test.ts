import { selfSignedCertificate } from '../support/self-signed.js';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkoutExample, createApp, deploymentLog, getThroughRouter, newRelease, pushAndWait, registerSshKey } from '../support/deploy.js';
import { steadyLoad } from '../support/steady-load.js';

// The router under steady load (keep-alive HTTP/1.1, HTTP/2 over TLS, new connections, POSTs) across
// redeploys, a restart, instance count changes and certificate changes: not one failed request.
// Also: forwarded headers from a trusted proxy and from anyone else, on both listeners.
let daemon: TestDaemon;
let gitEnv: NodeJS.ProcessEnv;
let dir: string;
let appId: string;
let host: string;
const TRUSTED = '127.0.0.5';

interface Facts {
  release: string;
  instanceNumber: string;
}

function keepAliveGet(
  agent: Agent,
  headers: Record<string, string> = {},
  localAddress?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: daemon.routerPort, path: '/', agent, localAddress, headers: { host, ...headers }, timeout: 15_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

function h2Get(session: ClientHttp2Session, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': '/', ':authority': host, ...headers });
    let body = '';
    let status = 0;
    stream.setEncoding('utf8');
    stream.setTimeout(15_000, () => stream.close());
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('data', (d: string) => (body += d));
    stream.on('end', () => resolve({ status, body }));
    stream.on('error', reject);
  });
}

const h2Session = () => http2Connect(`https://127.0.0.1:${daemon.httpsPort}`, { servername: host, rejectUnauthorized: false });

async function setInstances(count: number): Promise<void> {
  const response = await fetch(`${daemon.apiUrl}/v1/apps/${appId}/instances`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${daemon.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ count }),
  });
  assert.equal(response.status, 200, await response.text());
}

function selfSignedFiles(names: string[], tag: string): { cert: string; key: string } {
  return selfSignedCertificate(mkdtempSync(join(tmpdir(), 'slipway-edge-cert-')), 'tls', names, { subject: tag });
}

before(async () => {
  daemon = await startDaemon(['--trusted-proxy', `${TRUSTED}/32`]);
  ({ gitEnv } = await registerSshKey(daemon));
  dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'steady');
  host = `${appId}.localhost`;
  newRelease(dir, 'r0');
  const result = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
});

after(async () => {
  await daemon?.stop();
});

test('forwarded headers: the listener sets the protocol; a trusted proxy keeps and extends them; anyone else cannot spoof them', async () => {
  type Seen = { forwardedFor: string; forwardedProto: string; forwardedHost: string; reverseProxyIps: string };
  const spoof = { 'x-forwarded-for': '6.6.6.6', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.test' };
  const agent = new Agent({ keepAlive: false });
  const plain = JSON.parse((await keepAliveGet(agent, spoof)).body) as Seen;
  assert.deepEqual([plain.forwardedFor, plain.forwardedProto, plain.forwardedHost], ['127.0.0.1', 'http', host]);
  // The app is told whom to trust: the router's address towards it, then the operator's proxies.
  const trustedByApp = plain.reverseProxyIps.split(',');
  assert.equal(trustedByApp.length, 2, plain.reverseProxyIps);
  assert.match(trustedByApp[0]!, /^\d+\.\d+\.\d+\.\d+$/);
  assert.equal(trustedByApp[1], `${TRUSTED}/32`);
  const viaProxy = JSON.parse((await keepAliveGet(agent, spoof, TRUSTED)).body) as Seen;
  assert.deepEqual([viaProxy.forwardedFor, viaProxy.forwardedProto, viaProxy.forwardedHost], [`6.6.6.6, ${TRUSTED}`, 'https', 'evil.test']);
  const session = h2Session();
  const overTls = await h2Get(session, spoof);
  session.close();
  assert.equal(overTls.status, 200);
  const tls = JSON.parse(overTls.body) as Seen;
  assert.deepEqual([tls.forwardedFor, tls.forwardedProto, tls.forwardedHost], ['127.0.0.1', 'https', host]);
});

test('steady keep-alive, HTTP/2, new-connection and POST load across five redeploys, a restart, instance count changes and certificate changes: zero errors', {
  timeout: 600_000,
}, async () => {
  const load = steadyLoad(daemon, host);
  await sleep(300);
  for (let n = 1; n <= 5; n++) {
    newRelease(dir, `r${n}`);
    const result = await pushAndWait(daemon, dir, appId, gitEnv);
    assert.equal(result.state, 'OK', (await deploymentLog(daemon, appId, result.id)).join('\n'));
  }
  const restarted = await daemon.cli(['restart', '--app', appId]);
  assert.equal(restarted.code, 0, restarted.stderr);
  await setInstances(2);
  await sleep(500);
  await setInstances(1);
  const domain = `steady-${Date.now()}.example.test`;
  const added = await daemon.cli(['domain', 'add', domain, '--app', appId]);
  assert.equal(added.code, 0, added.stderr);
  for (const tag of ['uploaded-1', 'uploaded-2']) {
    const files = selfSignedFiles([domain], tag);
    const set = await daemon.cli(['domain', 'cert', 'set', domain, '--cert', files.cert, '--key', files.key, '--app', appId]);
    assert.equal(set.code, 0, set.stderr);
    await sleep(300);
  }
  await sleep(500);
  const { failures, failureCount, counts, releases } = await load.stop();
  assert.deepEqual(failures, [], `failed requests: ${failureCount}`);
  for (const [kind, count] of Object.entries(counts)) assert.ok(count > 20, `${kind}: only ${count} requests`);
  assert.ok(releases.has('r5'), `the load reached the last release (saw ${[...releases].join(', ')})`);
  const last = JSON.parse((await getThroughRouter(daemon, host)).body) as Facts;
  assert.equal(last.release, 'r5');
});
