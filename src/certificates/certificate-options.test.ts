import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAcmeDirectory, parseAcmeEmail, parseAcmeRetryBase, parseCheckInterval, parseDnsResolver } from './certificate-options.js';
import { canUseAcme } from './acme-eligible.js';

test('ACME options: an https directory, an e-mail address, a check interval in seconds', () => {
  assert.equal(parseAcmeDirectory(undefined), undefined);
  assert.equal(parseAcmeDirectory('https://acme.internal:14000/dir'), 'https://acme.internal:14000/dir');
  assert.throws(() => parseAcmeDirectory('http://acme.internal/dir'), /must be an https:\/\/ URL/);
  assert.throws(() => parseAcmeDirectory('acme'), /must be the URL of an ACME directory/);
  assert.equal(parseAcmeEmail('ops@example.com'), 'ops@example.com');
  assert.throws(() => parseAcmeEmail('ops at example'), /must be an e-mail address/);
  assert.equal(parseCheckInterval('60'), 60_000);
  for (const bad of ['0', '-1', '1.5', 'soon', '999999999']) assert.throws(() => parseCheckInterval(bad), /number of seconds/, bad);
});

test('ACME serves exact public names; wildcards and private top-level domains keep the provisional issuer', () => {
  assert.equal(canUseAcme('shop.example.com'), true);
  assert.equal(canUseAcme('xn--bcher-kva.de'), true);
  for (const name of ['*.example.com', 'shop.intranet.test', 'printer.local', 'nas.home.arpa', 'db.internal', 'x.localhost'])
    assert.equal(canUseAcme(name), false, name);
});

test('--acme-retry-base in seconds; --dns-resolver an IPv4 address with an optional port', () => {
  assert.equal(parseAcmeRetryBase(undefined), undefined);
  assert.equal(parseAcmeRetryBase('900'), 900_000);
  for (const bad of ['0', '1.5', 'hourly', '86401']) assert.throws(() => parseAcmeRetryBase(bad), /number of seconds/, bad);
  assert.equal(parseDnsResolver('127.0.0.1:8053'), '127.0.0.1:8053');
  assert.equal(parseDnsResolver('9.9.9.9'), '9.9.9.9:53');
  for (const bad of ['dns.example', '127.0.0.1:0', '300.1.1.1', '127.0.0.1:70000', '[::1]:53'])
    assert.throws(() => parseDnsResolver(bad), /IPv4 address with an optional port/, bad);
});
