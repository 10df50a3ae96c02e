import { test } from 'node:test';
import assert from 'node:assert/strict';
import { byPrecedence, forDisplay, mergeEnv, type EnvSection } from './merge-env.js';
import { secretValues } from './redact.js';

const own: EnvSection = {
  kind: 'application',
  source: 'application',
  env: [
    { name: 'REDIS_URL', value: 'redis://own' },
    { name: 'ONLY_OWN', value: '1' },
  ],
};
const redis: EnvSection = {
  kind: 'add-on',
  source: 'add-on cache (redis)',
  env: [
    { name: 'REDIS_URL', value: 'redis://:pw@10.77.0.1:6400' },
    { name: 'SHARED', value: 'from add-on' },
  ],
};
const pg: EnvSection = { kind: 'add-on', source: 'add-on db (postgresql)', env: [{ name: 'SHARED', value: 'from second add-on' }] };
const api: EnvSection = {
  kind: 'linked-app',
  source: 'linked app api',
  env: [
    { name: 'SHARED', value: 'from linked app' },
    { name: 'API_URL', value: 'http://api' },
  ],
};
const api2: EnvSection = { kind: 'linked-app', source: 'linked app api2', env: [{ name: 'API_URL', value: 'http://api2' }] };

test("the app's own variable overrides an add-on's, which overrides a linked app's", () => {
  const env = mergeEnv([own, redis, api]);
  assert.equal(env.REDIS_URL, 'redis://own');
  assert.equal(env.SHARED, 'from add-on');
  assert.equal(env.API_URL, 'http://api');
  assert.equal(env.ONLY_OWN, '1');
});

test('the order sections are given in does not change the result', () => {
  assert.deepEqual(mergeEnv([api, redis, own]), mergeEnv([own, redis, api]));
  assert.deepEqual(mergeEnv([redis, own, api]), mergeEnv([own, redis, api]));
});

test('among sources of one kind the one linked later wins', () => {
  assert.equal(mergeEnv([redis, pg]).SHARED, 'from second add-on');
  assert.equal(mergeEnv([api, api2]).API_URL, 'http://api2');
});

test('precedence order runs weakest first, display order strongest first', () => {
  const sections = [own, redis, pg, api, api2];
  assert.deepEqual(
    byPrecedence(sections).map((s) => s.source),
    ['linked app api', 'linked app api2', 'add-on cache (redis)', 'add-on db (postgresql)', 'application'],
  );
  assert.deepEqual(
    forDisplay(sections).map((s) => s.source),
    ['application', 'add-on db (postgresql)', 'add-on cache (redis)', 'linked app api2', 'linked app api'],
  );
});

test('no sections give an empty environment; empty sections change nothing', () => {
  assert.deepEqual(mergeEnv([]), {});
  assert.deepEqual(mergeEnv([{ kind: 'add-on', source: 'x', env: [] }, own]), { REDIS_URL: 'redis://own', ONLY_OWN: '1' });
});

test('add-on credentials are treated as secrets by the deploy-log redactor', () => {
  const env = {
    POSTGRESQL_ADDON_USER: 'addon_abc',
    POSTGRESQL_ADDON_PASSWORD: 'pg-password-123456',
    POSTGRESQL_ADDON_URI: 'postgresql://addon_abc:pg-password-123456@10.77.0.1:5433/addon_abc',
    REDIS_PASSWORD: 'redis-password-123456',
    REDIS_URL: 'redis://:redis-password-123456@10.77.0.1:6400',
  };
  const secrets = secretValues(env);
  for (const name of ['POSTGRESQL_ADDON_PASSWORD', 'POSTGRESQL_ADDON_URI', 'REDIS_PASSWORD', 'REDIS_URL'] as const) {
    assert.ok(secrets.includes(env[name]), `${name} is redacted`);
  }
  assert.ok(!secrets.includes('addon_abc'), 'the user name is not a secret');
});
