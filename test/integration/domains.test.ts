import { selfSignedCertificate } from '../support/self-signed.js';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../support/daemon.js';

// Custom domains through the CLI and the API: exact, wildcard, international, favourite,
// conflicts between organisations and hostile names. Routing and HTTPS are in edge-https.test.ts.
let daemon: TestDaemon;
let project: string;
let appId: string;

async function api(method: string, path: string, body?: unknown, token = daemon.adminToken) {
  const response = await fetch(`${daemon.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined, text };
}

async function cliOk(args: string[], options: { token?: string } = {}) {
  const result = await daemon.cli(args, { cwd: project, ...options });
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  return result;
}

before(async () => {
  daemon = await startDaemon();
  project = mkdtempSync(join(tmpdir(), 'slipway-domains-'));
  const created = await cliOk(['create', '--type', 'node', 'shop', '--region', 'par', '--org', 'default']);
  appId = created.stdout.trim();
});

after(async () => {
  await daemon?.stop();
});

test('domain add, list, favourite and rm; international names are stored as punycode', async () => {
  const empty = JSON.parse((await cliOk(['domain', '--format', 'json'])).stdout);
  assert.equal(empty.default, `${appId}.localhost`);
  assert.equal(empty.favourite, `${appId}.localhost`);
  assert.deepEqual(empty.domains, []);

  const added = await cliOk(['domain', 'add', 'Shop.Example.com']);
  assert.match(added.stderr, /shop\.example\.com now routes to shop/);
  await cliOk(['domain', 'add', '*.example.net']);
  const idn = await cliOk(['domain', 'add', 'bücher.example.org']);
  assert.match(idn.stderr, /xn--bcher-kva\.example\.org \(bücher\.example\.org\)/);

  const listed = JSON.parse((await cliOk(['domain', '--format', 'json'])).stdout);
  assert.deepEqual(
    listed.domains.map((d: { fqdn: string; wildcard: boolean }) => [d.fqdn, d.wildcard]),
    [
      ['*.example.net', true],
      ['shop.example.com', false],
      ['xn--bcher-kva.example.org', false],
    ],
  );
  assert.equal(listed.domains[2].name, 'bücher.example.org');

  await cliOk(['domain', 'favourite', 'set', 'shop.example.com']);
  const human = await cliOk(['domain']);
  assert.match(human.stdout, /^\* shop\.example\.com/m);
  assert.match(human.stdout, new RegExp(`^  ${appId}\\.localhost\\s+\\(default\\)`, 'm'));
  const { json } = await api('GET', `/v1/apps/${appId}`);
  assert.match(json.app.url, /^http:\/\/shop\.example\.com:\d+\/$/, 'the favourite is the address printed for the app');
  const wildcardFavourite = await daemon.cli(['domain', 'favourite', 'set', '*.example.net'], { cwd: project });
  assert.equal(wildcardFavourite.code, 1);
  assert.match(wildcardFavourite.stderr, /is a wildcard/);
  await cliOk(['domain', 'favourite', 'rm']);
  assert.equal(JSON.parse((await cliOk(['domain', '--format', 'json'])).stdout).favourite, `${appId}.localhost`);

  await cliOk(['domain', 'rm', 'bücher.example.org']);
  const gone = await daemon.cli(['domain', 'rm', 'bücher.example.org'], { cwd: project });
  assert.equal(gone.code, 1);
  assert.match(gone.stderr, /not a domain of this application/);
});

test("a domain held by another organisation's app is refused without a word about that app", async () => {
  const user = JSON.parse((await cliOk(['user', 'create', 'mallory', '--format', 'json'])).stdout) as { token: string };
  await cliOk(['org', 'create', 'mallory-org'], { token: user.token });
  const other = (
    await cliOk(['create', '--type', 'node', 'copycat', '--region', 'par', '--org', 'mallory-org'], { token: user.token })
  ).stdout.trim();

  const refused = await daemon.cli(['domain', 'add', 'SHOP.example.com', '--app', other], { token: user.token });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /shop\.example\.com is already in use on this platform/);
  for (const secret of [appId, 'shop ', 'default']) assert.ok(!refused.stderr.includes(secret), `the refusal mentions ${secret}`);
  const viaApi = await api('POST', `/v1/apps/${other}/domains`, { fqdn: 'shop.example.com' }, user.token);
  assert.equal(viaApi.status, 409);
  assert.ok(!viaApi.text.includes(appId));
  // Another app cannot remove or take over the domain either.
  assert.equal((await api('DELETE', `/v1/apps/${other}/domains/shop.example.com`, undefined, user.token)).status, 404);
  assert.equal((await api('PUT', `/v1/apps/${other}/favourite-domain`, { fqdn: 'shop.example.com' }, user.token)).status, 404);
  // A sub-domain covered by someone's wildcard is a name of its own.
  await cliOk(['domain', 'add', 'api.example.net', '--app', other], { token: user.token });
});

test('names that are not host names, and names of the platform, are refused with the reason', async () => {
  const refused: Array<[string, RegExp]> = [
    ['https://evil.example.com/', /":" cannot appear/],
    ['evil.example.com:8443', /":" cannot appear/],
    ['a b.example.com', /" " cannot appear/],
    ['$(reboot).example.com', /"\$" cannot appear/],
    ['evil.example.com;rm', /";" cannot appear/],
    ['../../etc/passwd', /"\/" cannot appear/],
    ['127.0.0.1', /IP address/],
    ['a.*.example.com', /wildcard is only allowed/],
    ['*.com', /single label/],
    [`${appId}.localhost`, /"_" cannot appear|platform's own domain/],
    ['other.localhost', /platform's own domain/],
    ['*.co.uk', /public suffix/],
    ['*.github.io', /public suffix/],
    ['*.localhost', /single label|platform's own domain/],
  ];
  for (const [name, reason] of refused) {
    const result = await daemon.cli(['domain', 'add', name], { cwd: project });
    assert.equal(result.code, 1, name);
    assert.match(result.stderr, reason, name);
  }
  const viaApi = await api('POST', `/v1/apps/${appId}/domains`, { fqdn: 'x.example.com\r\nHost: evil' });
  assert.equal(viaApi.status, 400);
  assert.equal((await api('POST', `/v1/apps/${appId}/domains`, { fqdn: 42 })).status, 400);
  assert.equal((await api('POST', `/v1/apps/${appId}/domains`, { fqdn: 'ok.example.com', extra: 1 })).status, 400);
  const listed = JSON.parse((await cliOk(['domain', '--format', 'json'])).stdout);
  assert.deepEqual(
    listed.domains.map((d: { fqdn: string }) => d.fqdn),
    ['*.example.net', 'shop.example.com'],
    'nothing refused was stored',
  );
});

test('domain cert set checks the pair and the names before storing it; cert rm removes it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-cert-'));
  const make = (name: string, cn: string, days = 2) => selfSignedCertificate(dir, name, [cn], { days });
  make('shop', 'shop.example.com');
  make('other', 'other.example.com');
  const set = (cert: string, key: string) =>
    daemon.cli(['domain', 'cert', 'set', 'shop.example.com', '--cert', join(dir, cert), '--key', join(dir, key)], { cwd: project });

  const mismatched = await set('shop.pem', 'other.key');
  assert.equal(mismatched.code, 1);
  assert.match(mismatched.stderr, /private key does not belong to the certificate/);
  assert.doesNotMatch(mismatched.stderr, /BEGIN|PRIVATE/, 'nothing of the files is quoted back');
  const wrongName = await set('other.pem', 'other.key');
  assert.equal(wrongName.code, 1);
  assert.match(wrongName.stderr, /does not cover shop\.example\.com: it is for other\.example\.com/);
  const notPem = await set('shop.key', 'shop.key');
  assert.equal(notPem.code, 1);
  assert.match(notPem.stderr, /not a PEM certificate/);
  const missing = await set('absent.pem', 'shop.key');
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /Cannot read --cert .*absent\.pem: ENOENT/);

  // What the router would refuse is refused at upload, with the reason.
  writeFileSync(join(dir, 'indented.pem'), readFileSync(join(dir, 'shop.pem'), 'utf8').replace(/^/gm, '    '));
  const indented = await set('indented.pem', 'shop.key');
  assert.equal(indented.code, 1);
  assert.match(indented.stderr, /not PEM as the router reads it: 1 of its 1 block\(s\) is indented/);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:1024',
      '-nodes',
      '-keyout',
      join(dir, 'weak.key'),
      '-out',
      join(dir, 'weak.pem'),
      '-days',
      '2',
      '-subj',
      '/CN=shop.example.com',
      '-addext',
      'subjectAltName=DNS:shop.example.com',
    ],
    { stdio: 'ignore' },
  );
  const weak = await set('weak.pem', 'weak.key');
  assert.equal(weak.code, 1);
  assert.match(weak.stderr, /RSA of 1024 bits/);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-sha1',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      join(dir, 'sha1.key'),
      '-out',
      join(dir, 'sha1.pem'),
      '-days',
      '2',
      '-subj',
      '/CN=shop.example.com',
      '-addext',
      'subjectAltName=DNS:shop.example.com',
    ],
    { stdio: 'ignore' },
  );
  const sha1 = await set('sha1.pem', 'sha1.key');
  assert.equal(sha1.code, 1);
  assert.match(sha1.stderr, /signed with SHA-1, which the router and browsers refuse/);
  assert.doesNotMatch(weak.stderr + indented.stderr, /MI[IG]|PRIVATE KEY/, 'nothing of the files is quoted back');
  // A chain whose second certificate did not sign the first.
  writeFileSync(join(dir, 'unordered.pem'), readFileSync(join(dir, 'shop.pem'), 'utf8') + readFileSync(join(dir, 'other.pem'), 'utf8'));
  const unordered = await daemon.cli(
    ['domain', 'cert', 'set', 'shop.example.com', '--cert', join(dir, 'unordered.pem'), '--key', join(dir, 'shop.key')],
    { cwd: project },
  );
  assert.equal(unordered.code, 1);
  assert.match(unordered.stderr, /chain is broken: certificate 1 of the file was not issued by certificate 2/);

  const ok = await set('shop.pem', 'shop.key');
  assert.equal(ok.code, 0, ok.stderr);
  // Which certificate the router then serves is checked over HTTPS in edge-https.test.ts.
  await cliOk(['domain', 'cert', 'rm', 'shop.example.com']);
  const again = await daemon.cli(['domain', 'cert', 'rm', 'shop.example.com'], { cwd: project });
  assert.equal(again.code, 1);
  assert.match(again.stderr, /has no uploaded certificate/);
});
