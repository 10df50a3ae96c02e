import { selfSignedCertificate } from '../support/self-signed.js';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:http2';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { freePort } from '../support/free-port.js';
import { checkoutExample, createApp, pushAndWait, registerSshKey } from '../support/deploy.js';
import { pebbleBinaries, startPebble, type TestPebble } from '../support/pebble.js';

// HTTPS through the router, one daemon and one deployed app: the internal CA for
// <app_id>.<domain> and private names (the client trusts the CA file the server printed),
// an uploaded certificate, ACME from a real Pebble whose validation goes through the router's
// HTTP port, HTTP/2, and force-https.
const PLATFORM = 'slipway.test';
const binaries = pebbleBinaries();
const noAcme = 'missing' in binaries ? binaries.missing : false;
if (noAcme) console.log(`Skipping the ACME part of the HTTPS tests: ${noAcme}.`);

let daemon: TestDaemon;
let pebble: TestPebble | undefined;
let routerPort: number;
let dir: string;
let appId: string;
let caFile: string;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function overHttps(host: string, ca: string | Buffer, path = '/'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port: daemon.httpsPort, servername: host, path, headers: { host }, ca, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function overHttp(host: string, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: routerPort, path, headers: { host }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function cliOk(args: string[]): Promise<string> {
  const result = await daemon.cli(args, { cwd: dir });
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

async function servedSource(fqdn: string): Promise<string | undefined> {
  const listing = JSON.parse(await cliOk(['domain', '--format', 'json'])) as {
    domains: Array<{ fqdn: string; certificate: { source: string } | null }>;
  };
  return listing.domains.find((d) => d.fqdn === fqdn)?.certificate?.source;
}

before(async () => {
  routerPort = await freePort();
  const extra = ['--domain', PLATFORM, '--router-port', String(routerPort)];
  if (!noAcme) {
    // Pebble validates HTTP-01 on the router's port, every name resolving to 127.0.0.1.
    pebble = await startPebble({ httpPort: routerPort, validitySeconds: 3600 });
    extra.push('--acme-directory', pebble.directoryUrl, '--acme-directory-ca', pebble.directoryCaFile);
  }
  daemon = await startDaemon(extra);
  const printed = /the internal CA's certificate is (\S+)/.exec(daemon.output());
  assert.ok(printed, `slipway server prints where its CA certificate is:\n${daemon.output()}`);
  caFile = printed[1]!;
  const { gitEnv } = await registerSshKey(daemon);
  dir = checkoutExample('node-hello');
  appId = await createApp(daemon, dir, 'secure');
  const deployed = await pushAndWait(daemon, dir, appId, gitEnv);
  assert.equal(deployed.state, 'OK', deployed.push);
});

after(async () => {
  await daemon?.stop();
  await pebble?.stop();
});

test('<app_id>.<domain> answers over HTTPS with the internal CA, HTTP/1.1 and HTTP/2, and the app sees X-Forwarded-Proto https', async () => {
  const host = `${appId}.${PLATFORM}`;
  const ca = readFileSync(caFile);
  const answer = await overHttps(host, ca, '/facts');
  assert.equal(answer.status, 200, answer.body);
  assert.equal(JSON.parse(answer.body).appId, appId);
  assert.equal(JSON.parse(answer.body).forwardedProto, 'https');

  const session = connect(`https://127.0.0.1:${daemon.httpsPort}`, { servername: host, ca });
  try {
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const stream = session.request({ ':path': '/facts', ':authority': host });
      let status = 0;
      let body = '';
      stream.on('response', (headers) => (status = Number(headers[':status'])));
      stream.setEncoding('utf8');
      stream.on('data', (d) => (body += d));
      stream.on('end', () => resolve({ status, body }));
      stream.on('error', reject);
    });
    assert.equal(status, 200);
    assert.equal(JSON.parse(body).appId, appId);
  } finally {
    session.close();
  }
});

test('the internal CA is name-constrained to the platform domain: a certificate it signed for another name is refused', async () => {
  const text = execFileSync('openssl', ['x509', '-in', caFile, '-noout', '-text'], { encoding: 'utf8' });
  assert.match(text, /X509v3 Name Constraints: critical\s+Permitted:\s+DNS:slipway\.test\s/);
  // Signed with the CA's own key (root's): what a CA without the constraint would let through.
  const work = mkdtempSync(join(tmpdir(), 'slipway-outside-'));
  const key = join(work, 'outside.key');
  execFileSync(
    'openssl',
    [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      key,
      '-out',
      join(work, 'outside.csr'),
      '-subj',
      '/CN=bank.example.com',
    ],
    { stdio: 'ignore' },
  );
  writeFileSync(join(work, 'ext'), 'subjectAltName=DNS:bank.example.com\n');
  execFileSync(
    'openssl',
    [
      'x509',
      '-req',
      '-in',
      join(work, 'outside.csr'),
      '-CA',
      caFile,
      '-CAkey',
      join(dirname(caFile), 'ca.key'),
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      join(work, 'ext'),
      '-out',
      join(work, 'outside.pem'),
    ],
    { stdio: 'ignore' },
  );
  const server = createHttpsServer({ cert: readFileSync(join(work, 'outside.pem')), key: readFileSync(key) }, (_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const port = (server.address() as AddressInfo).port;
    await assert.rejects(
      new Promise((resolve, reject) => {
        const req = httpsRequest(
          { host: '127.0.0.1', port, servername: 'bank.example.com', ca: readFileSync(caFile), agent: false },
          resolve,
        );
        req.on('error', reject);
        req.end();
      }),
      /permitted subtree violation/,
    );
  } finally {
    server.close();
  }
});

test('a private custom domain gets a provisional certificate no client trusts, an uploaded certificate replaces it', async () => {
  await cliOk(['domain', 'add', 'shop.intranet.test']);
  const ca = readFileSync(caFile);
  await assert.rejects(
    overHttps('shop.intranet.test', ca),
    /self.signed|unable to (verify|get local issuer)/i,
    'the platform CA does not vouch for it',
  );
  assert.equal(await servedSource('shop.intranet.test'), 'provisional');
  assert.match(await cliOk(['domain']), /shop\.intranet\.test +certificate: provisional, .*trusted by no client/);

  const keys = mkdtempSync(join(tmpdir(), 'slipway-upload-'));
  const upload = selfSignedCertificate(keys, 'upload', ['shop.intranet.test']);
  await cliOk(['domain', 'cert', 'set', 'shop.intranet.test', '--cert', upload.cert, '--key', upload.key]);
  assert.equal(await servedSource('shop.intranet.test'), 'uploaded');
  const uploaded = await overHttps('shop.intranet.test', readFileSync(upload.cert));
  assert.equal(uploaded.status, 200, 'a client that trusts only the uploaded certificate connects');
  await assert.rejects(
    overHttps('shop.intranet.test', ca),
    /self.signed|unable to verify/i,
    'the internal certificate is no longer served',
  );
});

test('a wildcard domain routes every sub-domain without its own entry, over HTTP and HTTPS; rm takes the route away', async () => {
  await cliOk(['domain', 'add', '*.wild.test']);
  for (const host of ['a.wild.test', 'deep.er.wild.test']) {
    const plain = await overHttp(host, '/facts');
    assert.equal(plain.status, 200, host);
    assert.equal(JSON.parse(plain.body).appId, appId);
  }
  await assert.rejects(
    overHttps('a.wild.test', readFileSync(caFile), '/facts'),
    /self.signed|unable to (verify|get local issuer)/i,
    'the platform CA does not sign the wildcard',
  );
  assert.equal((await overHttp('wild.test', '/')).status, 404, 'the wildcard does not cover the bare name');
  await cliOk(['domain', 'rm', '*.wild.test']);
  assert.equal((await overHttp('a.wild.test', '/')).status, 404);
});

test('force-https answers plain HTTP with a 301 to the same host and path over HTTPS; false turns it off', async () => {
  const host = `${appId}.${PLATFORM}`;
  assert.equal((await overHttp(host, '/facts?x=1')).status, 200);
  await cliOk(['config', 'set', 'force-https', 'true']);
  assert.equal((await cliOk(['config', 'get', 'force-https'])).trim(), 'true');
  const redirected = await overHttp(host, '/facts?x=1');
  assert.equal(redirected.status, 301);
  const location = new URL(String(redirected.headers.location));
  assert.equal(location.protocol, 'https:');
  assert.equal(location.hostname, host);
  assert.equal(`${location.pathname}${location.search}`, '/facts?x=1');
  assert.equal((await overHttp('shop.intranet.test', '/')).status, 301, 'custom domains of the app are redirected too');
  assert.equal((await overHttps(host, readFileSync(caFile), '/facts')).status, 200, 'HTTPS itself is served');
  await cliOk(['config', 'set', 'force-https', 'false']);
  assert.equal((await overHttp(host, '/facts?x=1')).status, 200);
});

test('a public domain gets a certificate from the ACME server, validated through the router', { skip: noAcme }, async () => {
  await cliOk(['domain', 'add', 'www.slipway-acme.dev']);
  const deadline = Date.now() + 60_000;
  while ((await servedSource('www.slipway-acme.dev')) !== 'acme') {
    if (Date.now() > deadline) assert.fail(`no ACME certificate within 60 s:\n${daemon.output()}\n${pebble!.output().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const answer = await overHttps('www.slipway-acme.dev', await pebble!.root());
  assert.equal(answer.status, 200, 'a client trusting only the ACME CA connects');
  assert.equal(JSON.parse((await overHttps('www.slipway-acme.dev', await pebble!.root(), '/facts')).body).appId, appId);
  assert.match(daemon.output(), /ACME: obtained the certificate of www\.slipway-acme\.dev/);
});

/** What `slipway domain` lists for the ACME domain: its certificate, before and after the restart. */
async function acmeCertificate(): Promise<unknown> {
  const listing = JSON.parse(await cliOk(['domain', '--format', 'json'])) as { domains: Array<{ fqdn: string; certificate: unknown }> };
  const domain = listing.domains.find((d) => d.fqdn === 'www.slipway-acme.dev');
  assert.ok(domain?.certificate, `www.slipway-acme.dev is listed with a certificate: ${JSON.stringify(listing.domains)}`);
  return domain.certificate;
}

let acmeBeforeRestart: unknown;

test('after a restart the same CA and the uploaded certificate are served from the store', async () => {
  // The ACME test above obtained a certificate (it is skipped, saying why, without Pebble).
  if (!noAcme) acmeBeforeRestart = await acmeCertificate();
  await daemon.stop();
  await daemon.restart();
  assert.ok(daemon.output().includes(caFile), 'the CA certificate is where it was');
  const deadline = Date.now() + 120_000;
  while ((await overHttps(`${appId}.${PLATFORM}`, readFileSync(caFile)).catch(() => ({ status: 0 }))).status !== 200) {
    if (Date.now() > deadline) assert.fail(`the app did not come back over HTTPS:\n${daemon.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  assert.equal(await servedSource('shop.intranet.test'), 'uploaded');
});

test('after the restart the ACME certificate comes from the store, not a new order', { skip: noAcme }, async () => {
  assert.ok(acmeBeforeRestart, 'the certificate was read before the restart');
  assert.deepEqual(await acmeCertificate(), acmeBeforeRestart);
  assert.equal((await overHttps('www.slipway-acme.dev', await pebble!.root())).status, 200);
});
