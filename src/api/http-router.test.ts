import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Store } from '../store/store.js';
import { createApiServer } from './server.js';
import { decodePathSegment } from './http-router.js';
import { ValidationError } from '../core/errors.js';

test('a path segment decodes its escapes, and a malformed one is a ValidationError', () => {
  assert.equal(decodePathSegment('caf%C3%A9%20shop'), 'café shop');
  for (const bad of ['%E0%A4%A', '%zz', 'shop%', '%C3']) {
    assert.throws(() => decodePathSegment(bad), (error: unknown) => error instanceof ValidationError && /not valid percent-encoding/.test((error as Error).message), bad);
  }
});

test('the API answers 400, not 500, for malformed percent-encoding in a path', async (t) => {
  const store = Store.open(join(mkdtempSync(join(tmpdir(), 'slipway-api-')), 'slipway.db'));
  const user = store.users.create('alice', true);
  const token = store.users.issueToken(user.id, 'test');
  const server = createApiServer({ store, endpoints: { host: 'localhost', sshPort: 2222, routerPort: 8080, domain: 'apps.localhost' } });
  const errors: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    errors.push(String(chunk));
    return write(chunk, ...rest);
  }) as typeof process.stderr.write;
  t.after(() => {
    process.stderr.write = write;
    server.close();
    store.close();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  for (const path of ['/v1/apps/%E0%A4%A', '/v1/apps/shop%/env', '/v1/orgs/%zz']) {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await response.json()) as { error: { code: string; message: string; hint: string } };
    assert.equal(response.status, 400, `${path}: ${JSON.stringify(body)}`);
    assert.equal(body.error.code, 'invalid');
    assert.match(body.error.message, /is not valid percent-encoding/);
    assert.match(body.error.hint, /%25/);
  }
  assert.deepEqual(errors.filter((e) => /URIError|API error/.test(e)), [], 'no stack printed');
});
