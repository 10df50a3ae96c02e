import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodePathSegment } from './http-router.js';
import { startTestApiServer } from '../../test/support/api-server.js';
import { ValidationError } from '../core/errors.js';

test('a path segment decodes its escapes, and a malformed one is a ValidationError', () => {
  assert.equal(decodePathSegment('caf%C3%A9%20shop'), 'café shop');
  for (const bad of ['%E0%A4%A', '%zz', 'shop%', '%C3']) {
    assert.throws(
      () => decodePathSegment(bad),
      (error: unknown) => error instanceof ValidationError && /not valid percent-encoding/.test((error as Error).message),
      bad,
    );
  }
});

test('the API answers 400, not 500, for malformed percent-encoding in a path', async (t) => {
  const api = await startTestApiServer();
  const errors: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    errors.push(String(chunk));
    return write(chunk, ...rest);
  }) as typeof process.stderr.write;
  t.after(() => {
    process.stderr.write = write;
    api.close();
  });
  for (const path of ['/v1/apps/%E0%A4%A', '/v1/apps/shop%/env', '/v1/orgs/%zz']) {
    const { status, body } = await api.request('GET', path);
    assert.equal(status, 400, `${path}: ${JSON.stringify(body)}`);
    assert.equal(body.error.code, 'invalid');
    assert.match(body.error.message, /is not valid percent-encoding/);
    assert.match(body.error.hint, /%25/);
  }
  assert.deepEqual(
    errors.filter((e) => /URIError|API error/.test(e)),
    [],
    'no stack printed',
  );
});
