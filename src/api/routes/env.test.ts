import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer } from '../../../test/support/api-server.js';

test('env set and env import refuse a health check path that is not a path, and keep what was there', async (t) => {
  const api = await startTestApiServer();
  t.after(() => api.close());
  await api.request('POST', '/v1/orgs', { name: 'acme' });
  const created = await api.request('POST', '/v1/apps', { name: 'shop', type: 'node', org: 'acme' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const env = `/v1/apps/${created.body.app.id}/env`;
  assert.equal((await api.request('PUT', `${env}/CC_HEALTH_CHECK_PATH`, { value: '/health' })).status, 200);

  for (const [name, value] of [
    ['CC_HEALTH_CHECK_PATH', 'health'],
    ['CC_HEALTH_CHECK_PATH_0', '/a b'],
    ['CC_HEALTH_CHECK_PATH_12', '/x\ty'],
    ['CC_HEALTH_CHECK_PATH', ''],
  ]) {
    const set = await api.request('PUT', `${env}/${name}`, { value });
    assert.equal(set.status, 400, `${name}=${JSON.stringify(value)}: ${JSON.stringify(set.body)}`);
    assert.equal(set.body.error.message, `${name} is ${JSON.stringify(value)}, which is not a path; nothing was changed.`);
    assert.match(set.body.error.hint, /starts with "\/" and has no spaces or control characters, e\.g\. \/health/);
    assert.match(set.body.error.hint, new RegExp(`slipway env set ${name} /health`));
  }
  const imported = await api.request('PUT', env, {
    env: [
      { name: 'A', value: '1' },
      { name: 'CC_HEALTH_CHECK_PATH_1', value: 'db' },
    ],
  });
  assert.equal(imported.status, 400, JSON.stringify(imported.body));
  assert.match(imported.body.error.message, /CC_HEALTH_CHECK_PATH_1 is "db", which is not a path/);
  assert.deepEqual((await api.request('GET', env)).body.env, [{ name: 'CC_HEALTH_CHECK_PATH', value: '/health' }]);

  // Names that only look alike are ordinary variables.
  for (const name of ['CC_HEALTH_CHECK_PATHS', 'CC_HEALTH_CHECK_PATH_X', 'MY_CC_HEALTH_CHECK_PATH']) {
    assert.equal((await api.request('PUT', `${env}/${name}`, { value: 'anything' })).status, 200, name);
  }
  assert.equal((await api.request('PUT', env, { env: [{ name: 'CC_HEALTH_CHECK_PATH_0', value: '/ready?full=1' }] })).status, 200);
});
