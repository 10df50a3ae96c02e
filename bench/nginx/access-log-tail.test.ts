import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appOfHost, parseNginxAccessLine } from './access-log-tail.js';
import type { ValidatedRoute } from '../../src/router/validate.js';

const APP = 'app_00000000-0000-4000-8000-000000000001';
const WILD = 'app_00000000-0000-4000-8000-000000000002';
const routes: ValidatedRoute[] = [
  { host: `${APP}.localhost`, appId: APP, upstreams: [], forceHttps: false },
  { host: '*.example.com', appId: WILD, upstreams: [], forceHttps: false },
];
const appOf = (host: string) => appOfHost(routes, host);

test("a forwarded request becomes a record; nginx's own answers do not", () => {
  const line = `127.0.0.1 [2024-05-01T12:00:00+00:00] "${APP}.localhost" "GET /a?b=\\x22c HTTP/1.1" 200 12 0.004 10.77.0.5:8080 0.003 abc`;
  assert.deepEqual(parseNginxAccessLine(line, appOf), {
    time: new Date('2024-05-01T12:00:00Z'),
    appId: APP,
    host: `${APP}.localhost`,
    client: '127.0.0.1',
    method: 'GET',
    path: '/a?b=\\x22c',
    status: 200,
    bytes: 12,
    durationMs: 4,
    instance: '10.77.0.5:8080',
    tls: false,
  });
  const retried = `10.0.0.1 [2024-05-01T12:00:00+00:00] "shop.example.com" "POST / HTTP/1.1" 502 150 1.000 10.77.0.5:8080, 10.77.0.6:8080 0.500, 0.500 abc`;
  assert.equal(parseNginxAccessLine(retried, appOf)?.instance, '10.77.0.6:8080');
  assert.equal(parseNginxAccessLine(retried, appOf)?.appId, WILD);
  const ownPage = `127.0.0.1 [2024-05-01T12:00:00+00:00] "${APP}.localhost" "GET / HTTP/1.1" 503 300 0.000 - - abc`;
  assert.equal(parseNginxAccessLine(ownPage, appOf), undefined);
  const unknownHost = `127.0.0.1 [2024-05-01T12:00:00+00:00] "other.localhost" "GET / HTTP/1.1" 200 3 0.001 10.77.0.5:8080 0.001 abc`;
  assert.equal(parseNginxAccessLine(unknownHost, appOf), undefined);
  assert.equal(parseNginxAccessLine('garbage', appOf), undefined);
});

test('hosts resolve exactly first, then by the longest wildcard', () => {
  assert.equal(appOf(`${APP}.LOCALHOST:8000`), APP);
  assert.equal(appOf('a.b.example.com'), WILD);
  assert.equal(appOf('example.com'), undefined);
});
