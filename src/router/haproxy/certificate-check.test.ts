import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { haproxyRefusal } from './certificate-check.js';

function pair(dir: string, name: string, key: string[]): string {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      ...key,
      '-nodes',
      '-keyout',
      join(dir, `${name}.key`),
      '-out',
      join(dir, `${name}.pem`),
      '-days',
      '2',
      '-subj',
      '/CN=shop.example.com',
      '-addext',
      'subjectAltName=DNS:shop.example.com',
    ],
    { stdio: 'ignore' },
  );
  return readFileSync(join(dir, `${name}.pem`), 'utf8') + readFileSync(join(dir, `${name}.key`), 'utf8');
}

test('HAProxy itself loads a good certificate and refuses a weak key or an indented PEM, saying why without the file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-haproxy-check-'));
  assert.equal(await haproxyRefusal(pair(dir, 'good', ['ec', '-pkeyopt', 'ec_paramgen_curve:P-256'])), undefined);
  const weak = await haproxyRefusal(pair(dir, 'weak', ['rsa:1024']));
  assert.match(weak ?? '', /unable to load SSL certificate into SSL Context/);
  const indented = await haproxyRefusal(pair(dir, 'indented', ['ec', '-pkeyopt', 'ec_paramgen_curve:P-256']).replace(/^/gm, '  '));
  assert.match(indented ?? '', /unable to load certificate/);
  assert.doesNotMatch(`${weak} ${indented}`, /slipway-cert-check|\.pem|BEGIN/, 'neither the path nor the content');
  assert.equal(await haproxyRefusal('x', '/nonexistent/haproxy'), undefined, 'without HAProxy the other checks stand alone');
});
