import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer } from '../../test/support/api-server.js';
import { main } from './main.js';

/** Runs the CLI against the API server with its admin token, collecting what it printed. */
async function cli(api: { url: string; token: string }, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, {
    env: { SLIPWAY_URL: api.url, SLIPWAY_TOKEN: api.token, XDG_CONFIG_HOME: '/nonexistent' },
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
  });
  return { code, out, err };
}

test('env set takes a value that starts with - (JVM options) as the value, before or after --app', async (t) => {
  const api = await startTestApiServer();
  t.after(() => api.close());
  await api.request('POST', '/v1/orgs', { name: 'acme' });
  const created = await api.request('POST', '/v1/apps', { name: 'play', type: 'sbt', org: 'acme' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.app.id as string;

  const first = await cli(api, ['env', 'set', 'JAVA_OPTS', '-Dplay.http.secret.key=abc -Xmx256m', '--app', id]);
  assert.equal(first.code, 0, first.err);
  const second = await cli(api, ['env', 'set', '--app', id, 'FLAGS', '--verbose']);
  assert.equal(second.code, 0, second.err);
  const third = await cli(api, ['env', 'set', '--app', id, 'NEGATIVE', '--', '-1']);
  assert.equal(third.code, 0, third.err);
  const env = (await api.request('GET', `/v1/apps/${id}/env`)).body.env as Array<{ name: string; value: string }>;
  assert.deepEqual(Object.fromEntries(env.map((v) => [v.name, v.value])), {
    JAVA_OPTS: '-Dplay.http.secret.key=abc -Xmx256m',
    FLAGS: '--verbose',
    NEGATIVE: '-1',
  });
});

test('elsewhere, an unknown short option says how to pass a value that starts with -', async (t) => {
  const api = await startTestApiServer();
  t.after(() => api.close());
  const result = await cli(api, ['addon', 'list', '-D']);
  assert.equal(result.code, 2);
  assert.match(result.err, /Unknown option '-D'\. If it begins a value rather than an option, put -- before the value/);
});
