import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { freePort } from '../support/free-port.js';
import { checkoutExample, createApp, pushAndWait, registerSshKey } from '../support/deploy.js';
import { pebbleBinaries } from '../support/pebble.js';
import { startTestDns, type TestDns } from '../support/test-dns.js';
import { waitUntil } from '../support/wait.js';

// One tenant cannot hurt the others through domains or certificates: wide wildcards refused,
// a domain routed only once its DNS proves it is the tenant's (a real DNS server,
// pebble-challtestsrv, that the daemon asks with --dns-resolver), and a certificate the router
// would refuse is refused at upload while the others keep serving HTTPS.
const PLATFORM = 'tenants.test';
const binaries = pebbleBinaries();
const skip = 'missing' in binaries ? binaries.missing : false;
if (skip) console.log(`Skipping the tenant domain tests: ${skip}.`);

let daemon: TestDaemon;
let dns: TestDns;
let routerPort: number;
const apps: Array<{ id: string; dir: string }> = [];

interface Answer {
  status: number;
  body: string;
}

function overHttp(host: string, path = '/'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: routerPort, path, headers: { host }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function overHttps(host: string, ca: string | Buffer, path = '/'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port: daemon.httpsPort, servername: host, path, headers: { host }, ca, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function cli(args: string[], app = apps[0]!) {
  return daemon.cli(args, { cwd: app.dir });
}

async function cliOk(args: string[], app = apps[0]!): Promise<{ stdout: string; stderr: string }> {
  const result = await cli(args, app);
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  return result;
}

interface Listed {
  fqdn: string;
  certificate: { source: string } | null;
  verification: { state: string; record: string; token: string };
}

async function listed(fqdn: string, app = apps[0]!): Promise<Listed> {
  const listing = JSON.parse((await cliOk(['domain', '--format', 'json'], app)).stdout) as { domains: Listed[] };
  const found = listing.domains.find((d) => d.fqdn === fqdn);
  assert.ok(found, `${fqdn} is listed`);
  return found;
}

/** Adds a domain, publishes the token `domain add` printed in the DNS, waits until the daemon verified it. */
async function addVerified(fqdn: string, app: { id: string; dir: string }): Promise<void> {
  const added = await cliOk(['domain', 'add', fqdn], app);
  const printed = /(_slipway-challenge\.\S+)\s+TXT\s+"([^"]+)"/.exec(added.stderr);
  assert.ok(printed, `domain add prints the record to create:\n${added.stderr}`);
  await dns.setTxt(printed[1]!, printed[2]!);
  await until(`${fqdn} verified`, async () => (await listed(fqdn, app)).verification.state === 'verified');
}

/** waitUntil, with the end of the daemon's output when the time runs out. */
async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  await waitUntil(what, probe, timeoutMs).catch((error: Error) => assert.fail(`${error.message}\n${daemon.output().slice(-3000)}`));
}

before(async () => {
  if (skip) return;
  dns = await startTestDns();
  routerPort = await freePort();
  daemon = await startDaemon([
    '--domain',
    PLATFORM,
    '--router-port',
    String(routerPort),
    '--require-domain-verification',
    '--dns-resolver',
    dns.address,
  ]);
  const { gitEnv } = await registerSshKey(daemon);
  for (const name of ['tenant-a', 'tenant-b']) {
    const dir = checkoutExample('node-hello');
    const id = await createApp(daemon, dir, name);
    const deployed = await pushAndWait(daemon, dir, id, gitEnv);
    assert.equal(deployed.state, 'OK', deployed.push);
    apps.push({ id, dir });
  }
});

after(async () => {
  await daemon?.stop();
  await dns?.stop();
});

test('wildcards over a public suffix or over the platform domain are refused with the reason', { skip }, async () => {
  for (const [name, reason] of [
    ['*.co.uk', /\*\.co\.uk" is a wildcard over co\.uk, a public suffix/],
    ['*.github.io', /public suffix/],
    [`*.${PLATFORM}`, /platform's own domain/],
    [`*.x.${PLATFORM}`, /platform's own domain/],
  ] as const) {
    const refused = await cli(['domain', 'add', name]);
    assert.equal(refused.code, 1, name);
    assert.match(refused.stderr, reason, name);
  }
});

test('a new domain waits unrouted and without a certificate until its TXT record holds the token domain add printed', {
  skip,
}, async () => {
  const fqdn = 'shop.tenant-a.example';
  const added = await cliOk(['domain', 'add', fqdn]);
  const printed = /(_slipway-challenge\.shop\.tenant-a\.example)\s+TXT\s+"([^"]+)"/.exec(added.stderr);
  assert.ok(printed, added.stderr);
  const waiting = await listed(fqdn);
  assert.equal(waiting.verification.state, 'pending');
  assert.equal(waiting.verification.token, printed[2]);
  assert.equal(waiting.certificate, null, 'no certificate for a name not proven');
  assert.match(
    (await cliOk(['domain'])).stdout,
    /shop\.tenant-a\.example +waiting for DNS proof: TXT _slipway-challenge\.shop\.tenant-a\.example/,
  );
  assert.equal((await overHttp(fqdn)).status, 404, 'not routed');
  const favourite = await cli(['domain', 'favourite', 'set', fqdn]);
  assert.equal(favourite.code, 1, 'an address not routed is no favourite');
  assert.match(favourite.stderr, /waits for its DNS proof/);

  await dns.setTxt(printed[1]!, printed[2]!);
  await until('the domain verified', async () => (await listed(fqdn)).verification.state === 'verified');
  const served = await overHttp(fqdn, '/facts');
  assert.equal(served.status, 200, served.body);
  assert.equal(JSON.parse(served.body).appId, apps[0]!.id);
  assert.equal((await listed(fqdn)).certificate?.source, 'provisional', 'a certificate once verified');
  assert.match(daemon.output(), /Domain shop\.tenant-a\.example is verified/);
});

test('a certificate the router would refuse is refused at upload; HTTPS for the other tenants goes on', { skip }, async () => {
  // The tenants' own CA, which the client below trusts, and nothing else.
  const work = mkdtempSync(join(tmpdir(), 'slipway-tenant-ca-'));
  const at = (file: string) => join(work, file);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    at('ca.key'),
    '-out',
    at('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=tenants test CA',
  );
  const issue = (name: string, keyType: string[]) => {
    openssl(
      'req',
      '-new',
      '-newkey',
      ...keyType,
      '-nodes',
      '-keyout',
      at(`${name}.key`),
      '-out',
      at(`${name}.csr`),
      '-subj',
      `/CN=${name}`,
    );
    writeFileSync(at(`${name}.ext`), `subjectAltName=DNS:${name}\n`);
    openssl(
      'x509',
      '-req',
      '-in',
      at(`${name}.csr`),
      '-CA',
      at('ca.pem'),
      '-CAkey',
      at('ca.key'),
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      at(`${name}.ext`),
      '-out',
      at(`${name}.pem`),
    );
    return { cert: at(`${name}.pem`), key: at(`${name}.key`) };
  };
  const ec = ['ec', '-pkeyopt', 'ec_paramgen_curve:P-256'];
  const [a, b] = apps as [{ id: string; dir: string }, { id: string; dir: string }];
  await addVerified('www.tenant-a.example', a);
  await addVerified('www.tenant-b.example', b);
  await addVerified('api.tenant-b.example', b);
  for (const [fqdn, app] of [
    ['www.tenant-a.example', a],
    ['www.tenant-b.example', b],
  ] as const) {
    const pair = issue(fqdn, ec);
    await cliOk(['domain', 'cert', 'set', fqdn, '--cert', pair.cert, '--key', pair.key], app);
  }
  const weak = issue('api.tenant-b.example', ['rsa:1024']);
  const refused = await cli(['domain', 'cert', 'set', 'api.tenant-b.example', '--cert', weak.cert, '--key', weak.key], b);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /RSA of 1024 bits/);
  writeFileSync(at('indented.pem'), readFileSync(at('www.tenant-a.example.pem'), 'utf8').replace(/^/gm, '\t'));
  const indented = await cli(
    ['domain', 'cert', 'set', 'www.tenant-a.example', '--cert', at('indented.pem'), '--key', at('www.tenant-a.example.key')],
    a,
  );
  assert.equal(indented.code, 1);
  assert.match(indented.stderr, /indented/);

  const ca = readFileSync(at('ca.pem'));
  for (const [fqdn, app] of [
    ['www.tenant-a.example', a],
    ['www.tenant-b.example', b],
  ] as const) {
    const answer = await overHttps(fqdn, ca, '/facts');
    assert.equal(answer.status, 200, `${fqdn}: ${answer.body}`);
    assert.equal(JSON.parse(answer.body).appId, app.id, `${fqdn} reaches its own app`);
    assert.equal((await listed(fqdn, app)).certificate?.source, 'uploaded');
  }
  assert.equal((await listed('api.tenant-b.example', b)).certificate?.source, 'provisional', 'the refused upload changed nothing');
  assert.doesNotMatch(daemon.output(), /The router did not take the certificates/);
});

test("a name waiting for its proof cannot be held against its owner: another app's claim replaces it, the DNS decides", {
  skip,
}, async () => {
  const [a, b] = apps as [{ id: string; dir: string }, { id: string; dir: string }];
  await cliOk(['domain', 'add', 'squat.tenant-b.example'], a);
  await addVerified('squat.tenant-b.example', b);
  const served = await overHttp('squat.tenant-b.example', '/facts');
  assert.equal(served.status, 200, served.body);
  assert.equal(JSON.parse(served.body).appId, b.id);
  const listing = JSON.parse((await cliOk(['domain', '--format', 'json'], a)).stdout) as { domains: Array<{ fqdn: string }> };
  assert.ok(!listing.domains.some((d) => d.fqdn === 'squat.tenant-b.example'), 'the waiting claim is gone');
  const late = await cli(['domain', 'add', 'squat.tenant-b.example'], a);
  assert.equal(late.code, 1, 'a verified name is not taken over');
  assert.match(late.stderr, /already in use/);
});

test('started again without --require-domain-verification, a domain that waited is routed', { skip }, async () => {
  await cliOk(['domain', 'add', 'late.tenant-a.example']);
  assert.equal((await overHttp('late.tenant-a.example')).status, 404);
  await daemon.stop();
  await daemon.restart({ extraArgs: ['--domain', PLATFORM, '--router-port', String(routerPort)] });
  const deadline = Date.now() + 60_000;
  let answer = await overHttp('late.tenant-a.example', '/facts').catch(() => ({ status: 0, body: '' }));
  while (answer.status !== 200) {
    if (Date.now() > deadline) assert.fail(`not routed after the restart (${answer.status}):\n${daemon.output().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    answer = await overHttp('late.tenant-a.example', '/facts').catch(() => ({ status: 0, body: '' }));
  }
  assert.equal(JSON.parse(answer.body).appId, apps[0]!.id);
  assert.match(daemon.output(), /1 domain\(s\) waiting for their DNS proof are routed: --require-domain-verification is off/);
  assert.equal((await listed('late.tenant-a.example')).verification.state, 'verified');
});
