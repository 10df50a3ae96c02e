import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../src/store/store.js';
import type { Router, TlsCertificate } from '../../src/router/router.js';
import { AcmeChallengeResponder } from '../../src/certificates/acme-challenge-responder.js';
import { AcmeIssuer } from '../../src/certificates/acme-issuer.js';
import { CertificateManager } from '../../src/certificates/certificate-manager.js';
import { InternalCa } from '../../src/certificates/internal-ca.js';
import { pebbleBinaries, startPebble, type TestPebble } from '../support/pebble.js';
import { waitUntil } from '../support/wait.js';

// ACME against a real Pebble whose validation authority fetches the HTTP-01 challenges from the
// daemon's challenge responder (through DNS answers of 127.0.0.1). The router here only records
// the certificates it is given: serving them over HTTPS is the router's own tests' job.
const binaries = pebbleBinaries();
const skip = 'missing' in binaries ? binaries.missing : false;
if (skip) console.log(`Skipping the ACME tests: ${skip}.`);

const DOMAIN = 'shop.slipway-acme.dev';
const RETRY_BASE_MS = 3000;
let pebble: TestPebble;
let responder: AcmeChallengeResponder;
let store: Store;
let manager: CertificateManager;
const applied: TlsCertificate[][] = [];
const logged: string[] = [];

const recordingRouter: Router = {
  start: async () => undefined,
  apply: async () => undefined,
  applyCertificates: async (certs) => {
    applied.push([...certs]);
  },
  stop: async () => undefined,
  detach: async () => undefined,
};

/** waitUntil, with what the issuer logged and what Pebble printed when the time runs out. */
function until<T>(what: string, probe: () => T, timeoutMs = 60_000): Promise<Exclude<T, undefined | false>> {
  return waitUntil(what, probe, timeoutMs).catch((error: Error) => {
    throw new Error(`${error.message}\nDaemon log:\n${logged.join('\n')}\nPebble:\n${pebble.output().slice(-3000)}`);
  });
}

/** Serves the certificate over TLS and connects trusting only Pebble's root. */
async function handshake(cert: TlsCertificate, root: string, servername: string): Promise<string> {
  const server = createServer({ cert: cert.certificatePem, key: cert.privateKeyPem }, (_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, servername, ca: root }, (res) => {
        res.resume();
        res.on('end', () => resolve(String(res.statusCode)));
      });
      req.on('error', reject);
      req.end();
    });
  } finally {
    server.close();
  }
}

before(async () => {
  if (skip) return;
  responder = new AcmeChallengeResponder();
  const upstream = await responder.start();
  pebble = await startPebble({ httpPort: upstream.port, validitySeconds: 30 });
  store = Store.open(join(mkdtempSync(join(tmpdir(), 'slipway-acme-')), 'slipway.db'));
  const org = store.orgs.create('acme');
  const app = store.apps.create({ orgId: org.id, name: 'shop', type: 'node', region: 'par' });
  store.domains.add(app.id, DOMAIN);
  store.domains.add(app.id, '*.slipway-acme.dev');
  store.domains.add(app.id, 'intranet.test');
  const caFolder = mkdtempSync(join(tmpdir(), 'slipway-acme-ca-'));
  const ca = await InternalCa.openOrCreate(join(caFolder, 'ca'), 'slipway.test', { permittedDomain: 'slipway.test' });
  const provisional = await InternalCa.openOrCreate(join(caFolder, 'provisional'), 'slipway.test');
  manager = new CertificateManager({
    store,
    router: recordingRouter,
    ca,
    provisional,
    platformDomain: 'slipway.test',
    acme: new AcmeIssuer({
      store,
      directoryUrl: pebble.directoryUrl,
      challenges: responder,
      directoryCaPem: pebble.directoryCaPem,
      // Failed orders wait 3 s, then 6 s... (15 minutes, then 30, then an hour by default).
      retryBaseMs: RETRY_BASE_MS,
    }),
    applyRoutes: async () => undefined,
    // Certificates live 30 s: checked every second, renewed with less than 10 s left, which leaves
    // an order (about 5 s on a busy machine) time to finish before the old one runs out.
    checkIntervalMs: 1000,
    log: (line) => logged.push(line),
  });
  await manager.start();
});

after(async () => {
  manager?.stop();
  await pebble?.stop();
  await responder?.stop();
  store?.close();
});

test('a public domain gets a certificate by ACME HTTP-01; until then, and for wildcards and private names, the provisional issuer serves', {
  skip,
}, async () => {
  assert.equal(manager.served('*.slipway-acme.dev')?.source, 'provisional', 'HTTP-01 cannot prove a wildcard');
  assert.equal(manager.served('intranet.test')?.source, 'provisional', 'no public CA issues for .test');
  assert.equal(store.acme.order('intranet.test'), undefined);

  await until('the ACME certificate', () => (manager.served(DOMAIN)?.source === 'acme' ? true : undefined));
  const [stored] = store.certificates.of(DOMAIN);
  assert.equal(stored!.source, 'acme');
  assert.equal(store.acme.order(DOMAIN)?.state, 'valid');
  assert.ok(store.acme.account(pebble.directoryUrl)?.account_url, 'the account is kept in the store');
  const served = applied.at(-1)!.find((c) => c.names.includes(DOMAIN))!;
  assert.equal(served.certificatePem, stored!.certificate_pem, 'the router was given the ACME certificate');
  assert.equal(await handshake(served, await pebble.root(), DOMAIN), '200', 'the certificate chains to the ACME CA and names the domain');
  assert.match(logged.join('\n'), new RegExp(`ACME: obtained the certificate of ${DOMAIN.replaceAll('.', '\\.')}`));
});

test('an ACME certificate is renewed before it expires and the router gets the new one', { skip }, async () => {
  const first = new X509Certificate(store.certificates.of(DOMAIN)[0]!.certificate_pem);
  const renewed = await until('the renewal', () => {
    const now = store.certificates.of(DOMAIN)[0];
    const cert = now && new X509Certificate(now.certificate_pem);
    return cert && cert.serialNumber !== first.serialNumber ? cert : undefined;
  });
  assert.ok(new Date(renewed.validFrom) < new Date(first.validTo), 'renewed before the old one ran out');
  assert.ok(new Date(renewed.validTo) > new Date(first.validTo));
  await until('the router to serve the renewed certificate', () =>
    applied.at(-1)!.some((c) => c.names.includes(DOMAIN) && new X509Certificate(c.certificatePem).serialNumber === renewed.serialNumber)
      ? true
      : undefined,
  );
  assert.match(logged.join('\n'), /ACME: renewed the certificate of shop\.slipway-acme\.dev/);
});

test("a refused order is recorded with the CA's reason and the provisional certificate keeps serving", { skip }, async () => {
  const app = store.apps.all()[0]!;
  store.domains.add(app.id, 'refused.slipway-acme.dev');
  await manager.changed();
  const order = await until('the refused order', () =>
    store.acme.order('refused.slipway-acme.dev')?.state === 'invalid' ? store.acme.order('refused.slipway-acme.dev') : undefined,
  );
  assert.match(order.error ?? '', /refused|blocked|policy|forbid/i);
  assert.equal(manager.served('refused.slipway-acme.dev')?.source, 'provisional');
  assert.match(logged.join('\n'), /ACME: no certificate for refused\.slipway-acme\.dev/);
});

test('failed orders back off per name: after two failures the next order waits twice as long, other names are not held up', {
  skip,
}, async () => {
  const name = 'refused.slipway-acme.dev';
  // The manager checks every second: without backoff the refused name would be ordered again at each check.
  const second = await until('the second failure', () => {
    const order = store.acme.order(name);
    return order && order.failures >= 2 && order.state === 'invalid' ? order : undefined;
  });
  assert.equal(second.failures, 2, 'no order between the first retry and the second failure');
  const wait = new Date(second.retry_after!).getTime() - new Date(second.updated_at).getTime();
  assert.ok(wait >= 2 * RETRY_BASE_MS - 200 && wait <= 2 * RETRY_BASE_MS + 1000, `the second failure waits 2 x the base: ${wait} ms`);
  const third = await until(
    'the third failure',
    () => {
      const order = store.acme.order(name);
      return order && order.failures >= 3 && order.state === 'invalid' ? order : undefined;
    },
    30_000,
  );
  assert.equal(third.failures, 3);
  assert.ok(
    new Date(third.updated_at).getTime() >= new Date(second.retry_after!).getTime(),
    `the third order came after ${second.retry_after}, not before (${third.updated_at})`,
  );
  assert.match(logged.join('\n'), /failure 2 in a row; next try after/);
  assert.equal(store.acme.order(DOMAIN)?.failures, 0, 'a name whose orders succeed has no failure counted');
});
