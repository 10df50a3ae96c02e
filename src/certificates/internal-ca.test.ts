import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, statSync, readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { InternalCa } from './internal-ca.js';
import { checkUploadedCertificate } from './uploaded-certificate.js';

test('the internal CA is created once, its key 0600, and what it issues verifies against its certificate', async () => {
  const folder = join(mkdtempSync(join(tmpdir(), 'slipway-ca-')), 'ca');
  const ca = await InternalCa.openOrCreate(folder, 'localhost');
  assert.equal(statSync(join(folder, 'ca.key')).mode & 0o777, 0o600);
  const again = await InternalCa.openOrCreate(folder, 'localhost');
  assert.equal(
    readFileSync(again.certificatePath, 'utf8'),
    readFileSync(ca.certificatePath, 'utf8'),
    'a restart keeps the CA clients trust',
  );

  const issued = await again.issue(['*.apps.test', 'shop.test']);
  assert.doesNotThrow(() => checkUploadedCertificate('x.apps.test', issued.certificatePem, issued.privateKeyPem));
  assert.doesNotThrow(() => checkUploadedCertificate('*.apps.test', issued.certificatePem, issued.privateKeyPem));
  assert.throws(
    () => checkUploadedCertificate('other.test', issued.certificatePem, issued.privateKeyPem),
    /does not cover other\.test: it is for \*\.apps\.test, shop\.test/,
  );

  // A TLS client that trusts only the CA file accepts the server for both names.
  const server = createServer({ cert: issued.certificatePem, key: issued.privateKeyPem }, (_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const ask = (servername: string) =>
    new Promise<string>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, servername, headers: { host: servername }, ca: readFileSync(ca.certificatePath) },
        (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve(body));
        },
      );
      req.on('error', reject);
      req.end();
    });
  try {
    assert.equal(await ask('app_1.apps.test'.replace('_', '-')), 'ok');
    assert.equal(await ask('shop.test'), 'ok');
    await assert.rejects(ask('other.test'), /altnames|Hostname/);
  } finally {
    server.close();
  }
});

test('a CA without the name constraint (an upgrade, or a new --domain) is replaced by a constrained one, the old kept aside unused', async () => {
  const folder = join(mkdtempSync(join(tmpdir(), 'slipway-ca-')), 'ca');
  const old = await InternalCa.openOrCreate(folder, 'apps.test');
  const oldPem = readFileSync(old.certificatePath, 'utf8');
  const constrained = await InternalCa.openOrCreate(folder, 'apps.test', { permittedDomain: 'apps.test' });
  assert.ok(constrained.retiredTo, 'the old CA was retired');
  assert.equal(readFileSync(join(constrained.retiredTo, 'ca.pem'), 'utf8'), oldPem);
  assert.equal(statSync(join(constrained.retiredTo, 'ca.key')).mode & 0o777, 0o600);
  assert.notEqual(readFileSync(constrained.certificatePath, 'utf8'), oldPem);
  const again = await InternalCa.openOrCreate(folder, 'apps.test', { permittedDomain: 'apps.test' });
  assert.equal(again.retiredTo, undefined, 'a constrained CA is kept from start to start');
  const moved = await InternalCa.openOrCreate(folder, 'other.test', { permittedDomain: 'other.test' });
  assert.ok(moved.retiredTo, 'a new platform domain gets a CA of its own');
});
