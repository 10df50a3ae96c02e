import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDomainName } from './domain-name.js';
import { ValidationError } from '../core/errors.js';

const PLATFORM = 'apps.example.org';

test('exact and wildcard names come back lower-case ASCII; international names as punycode', () => {
  assert.deepEqual(parseDomainName('Shop.Example.COM', PLATFORM), { fqdn: 'shop.example.com', wildcard: false });
  assert.deepEqual(parseDomainName('*.example.com', PLATFORM), { fqdn: '*.example.com', wildcard: true });
  assert.deepEqual(parseDomainName('*.shop.co.uk', PLATFORM), { fqdn: '*.shop.co.uk', wildcard: true }, 'below a public suffix');
  assert.equal(parseDomainName('co.uk', PLATFORM).fqdn, 'co.uk', 'an exact name takes only itself');
  assert.deepEqual(parseDomainName('bücher.example', PLATFORM), { fqdn: 'xn--bcher-kva.example', wildcard: false });
  assert.deepEqual(parseDomainName('*.ＡＢＣ.de', PLATFORM), { fqdn: '*.abc.de', wildcard: true });
  assert.deepEqual(parseDomainName('xn--bcher-kva.example', PLATFORM).fqdn, 'xn--bcher-kva.example');
  assert.equal(parseDomainName('example.com.', PLATFORM).fqdn, 'example.com', 'a final dot is the root, not part of the name');
});

test('anything that is not a host name is refused with the reason', () => {
  const refused: Array<[string, RegExp]> = [
    ['', /required/],
    ['https://example.com', /":" cannot appear/],
    ['example.com:443', /":" cannot appear/],
    ['example.com/path', /"\/" cannot appear/],
    ['ex%41mple.com', /"%" cannot appear/],
    ['a b.com', /" " cannot appear/],
    ['a_b.example.com', /"_" cannot appear/],
    ['user@example.com', /"@" cannot appear/],
    ['[::1]', /"\[" cannot appear/],
    ['exa\nmple.com', /cannot appear/],
    ["x.com';DROP", /cannot appear/],
    ['localhost', /single label/],
    ['*.com', /single label/],
    ['10.0.0.1', /IP address/],
    ['a..b.com', /each dot-separated part/],
    ['-a.example.com', /each dot-separated part/],
    ['a.*.example.com', /wildcard is only allowed/],
    ['**.example.com', /wildcard is only allowed/],
    ['*example.com', /wildcard is only allowed/],
    [`${'a'.repeat(64)}.com`, /each dot-separated part/],
    [`${'a.'.repeat(130)}com`, /too long/],
    ['xn--zz.com', /not a valid international domain name/],
    ['apps.example.org', /platform's own domain/],
    ['app_1.apps.example.org', /cannot appear/],
    ['x.apps.example.org', /platform's own domain/],
    ['*.apps.example.org', /platform's own domain/],
    ['*.co.uk', /public suffix/],
    ['*.CO.UK.', /public suffix/],
    ['*.github.io', /public suffix/],
    ['*.example.org', /would cover the platform's own domain/],
  ];
  for (const [input, reason] of refused) {
    assert.throws(
      () => parseDomainName(input, PLATFORM),
      (e: Error) => e instanceof ValidationError && reason.test(e.message),
      JSON.stringify(input),
    );
  }
  assert.throws(() => parseDomainName(42, PLATFORM), ValidationError);
});
