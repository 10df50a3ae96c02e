/** How the daemon reads the registry's credential and hands it to Docker; the real registry is in swarm-backend.test.ts. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RegistryAccess } from './registry.js';

test("X-Registry-Auth is the credential's JSON in padded base64url, as the Docker engine decodes it", () => {
  // A password whose base64 holds "+" and "/": the engine's URL decoding would misread them.
  const access = new RegistryAccess({ address: '127.0.0.1:5000', user: 'slipway', password: '>>>???', ca: Buffer.from('') });
  assert.doesNotMatch(access.engineAuth, /[+/]/);
  assert.equal(access.engineAuth.length % 4, 0);
  assert.deepEqual(JSON.parse(Buffer.from(access.engineAuth, 'base64url').toString('utf8')), {
    username: 'slipway',
    password: '>>>???',
    serveraddress: '127.0.0.1:5000',
  });
});

test('a missing or empty password file, or a missing CA, is said with the option to give and never quotes the file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'registry-test-'));
  try {
    const ca = join(dir, 'ca.crt');
    writeFileSync(ca, 'not checked here');
    const load = (passwordFile: string, caFile = ca) =>
      RegistryAccess.load({ address: '127.0.0.1:5000', user: 'slipway', passwordFile, caFile });
    assert.throws(
      () => load(join(dir, 'none')),
      /Cannot read the password of the swarm registry 127\.0\.0\.1:5000 at .*none \(ENOENT\): give it with --registry-password-file/,
    );
    writeFileSync(join(dir, 'empty'), '\n');
    assert.throws(() => load(join(dir, 'empty')), /password file .*empty is empty/);
    writeFileSync(join(dir, 'password'), 's3cret-value\n');
    assert.throws(
      () => load(join(dir, 'password'), join(dir, 'no-ca')),
      (e: Error) => /--registry-ca/.test(e.message) && !e.message.includes('s3cret'),
    );
    assert.equal(load(join(dir, 'password')).address, '127.0.0.1:5000');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a registry address that is not host:port is refused', () => {
  assert.throws(() => new RegistryAccess({ address: 'https://r', user: 'u', password: 'p', ca: Buffer.from('') }), /must be host:port/);
});
