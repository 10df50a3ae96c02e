import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseNpmConfigLines } from './machine-network-env.js';

test("npm config get's key=value lines: set values kept in order, unset ones and other keys left out", () => {
  const values = parseNpmConfigLines(
    [
      'registry=http://127.0.0.1:4873/',
      'cafile=/etc/ssl/certs/ca-certificates.crt',
      'strict-ssl=true',
      'proxy=null',
      'https-proxy=http://user:pa=ss@10.0.0.1:3128',
      'noproxy=',
      'color=always',
      'a line without an equals sign',
      '',
    ].join('\n'),
  );
  assert.deepEqual(
    [...values],
    [
      ['registry', 'http://127.0.0.1:4873/'],
      ['cafile', '/etc/ssl/certs/ca-certificates.crt'],
      ['strict-ssl', 'true'],
      ['https-proxy', 'http://user:pa=ss@10.0.0.1:3128'],
    ],
  );
});
