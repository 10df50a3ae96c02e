import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addonAccess, addonServerOf, type AddonServer } from './addon-access.js';
import { hbaConf } from '../addons/postgresql/cluster-config.js';

const gateway = '10.77.0.1';
const pgA: AddonServer = {
  addonId: 'addon_a',
  provider: 'postgresql',
  host: gateway,
  port: 5433,
  database: 'addon_0000000a',
  role: 'addon_0000000a',
};
const pgB: AddonServer = {
  addonId: 'addon_b',
  provider: 'postgresql',
  host: gateway,
  port: 5433,
  database: 'addon_0000000b',
  role: 'addon_0000000b',
};
const redisA: AddonServer = { addonId: 'addon_r', provider: 'redis', host: gateway, port: 6401 };
const externalPg: AddonServer = {
  addonId: 'addon_x',
  provider: 'postgresql',
  host: '192.0.2.10',
  port: 5432,
  database: 'addon_0000000c',
  role: 'addon_0000000c',
};

const sandboxes = [
  { appId: 'app_a', kind: 'instance' as const, address: '10.77.0.2' },
  { appId: 'app_a', kind: 'build' as const, address: '10.77.0.10' },
  { appId: 'app_b', kind: 'instance' as const, address: '10.77.0.4' },
  { appId: 'app_c', kind: 'instance' as const, address: '10.77.0.5' },
];

test("each sandbox reaches the add-on ports of its own app's links, builds included, nothing else", () => {
  const plan = addonAccess({
    gateway,
    servers: [pgA, pgB, redisA, externalPg],
    links: [
      { appId: 'app_a', addonId: 'addon_a' },
      { appId: 'app_a', addonId: 'addon_r' },
      { appId: 'app_b', addonId: 'addon_b' },
      { appId: 'app_c', addonId: 'addon_x' },
      { appId: 'app_gone', addonId: 'addon_a' },
      { appId: 'app_b', addonId: 'addon_deleted' },
    ],
    sandboxes,
  });
  assert.deepEqual(plan.endpoints, [
    { address: '10.77.0.2', port: 5433 },
    { address: '10.77.0.2', port: 6401 },
    { address: '10.77.0.4', port: 5433 },
    { address: '10.77.0.10', port: 5433 },
    { address: '10.77.0.10', port: 6401 },
  ]);
  // The shared cluster listens on one port for every database: pg_hba.conf tells them apart.
  assert.deepEqual(plan.postgresql, [
    { database: 'addon_0000000a', role: 'addon_0000000a', address: '10.77.0.2' },
    { database: 'addon_0000000a', role: 'addon_0000000a', address: '10.77.0.10' },
    { database: 'addon_0000000b', role: 'addon_0000000b', address: '10.77.0.4' },
  ]);
});

test('pg_hba.conf opens each database to the addresses of its linked apps only, with SCRAM', () => {
  const plan = addonAccess({
    gateway,
    servers: [pgA, pgB],
    links: [
      { appId: 'app_a', addonId: 'addon_a' },
      { appId: 'app_b', addonId: 'addon_b' },
    ],
    sandboxes,
  });
  const lines = hbaConf({ hostAddresses: ['127.0.0.1', gateway], appSubnet: '10.77.0.0/16', clients: plan.postgresql })
    .split('\n')
    .filter((l) => l.startsWith('host'))
    .map((l) => l.split(/\s+/));
  assert.deepEqual(lines, [
    ['host', 'all', 'all', '127.0.0.1/32', 'scram-sha-256'],
    ['host', 'all', 'all', '::1/128', 'scram-sha-256'],
    ['host', 'all', 'all', '10.77.0.1/32', 'scram-sha-256'],
    ['host', 'addon_0000000a', 'addon_0000000a', '10.77.0.10/32', 'scram-sha-256'],
    ['host', 'addon_0000000a', 'addon_0000000a', '10.77.0.2/32', 'scram-sha-256'],
    ['host', 'addon_0000000b', 'addon_0000000b', '10.77.0.4/32', 'scram-sha-256'],
  ]);
});

test('no sandbox, no link: nothing is open', () => {
  assert.deepEqual(addonAccess({ gateway, servers: [pgA, redisA], links: [{ appId: 'app_a', addonId: 'addon_a' }], sandboxes: [] }), {
    endpoints: [],
    serverPorts: [5433, 6401],
    postgresql: [],
  });
  assert.deepEqual(addonAccess({ gateway, servers: [pgA, redisA], links: [], sandboxes }), {
    endpoints: [],
    serverPorts: [5433, 6401],
    postgresql: [],
  });
});

test("every add-on server on the host has its port closed to the host's other users, linked or not; one elsewhere is not ours", () => {
  const redisB: AddonServer = { addonId: 'addon_s', provider: 'redis', host: gateway, port: 6400 };
  const plan = addonAccess({ gateway, servers: [redisA, pgA, externalPg, pgB, redisB], links: [], sandboxes: [] });
  assert.deepEqual(plan.serverPorts, [5433, 6400, 6401]);
});

test("an add-on's server is read from the variables its apps receive", () => {
  assert.deepEqual(
    addonServerOf(
      { id: 'addon_a', provider: 'postgresql' },
      {
        POSTGRESQL_ADDON_HOST: gateway,
        POSTGRESQL_ADDON_PORT: '5433',
        POSTGRESQL_ADDON_DB: 'addon_0000000a',
        POSTGRESQL_ADDON_USER: 'addon_0000000a',
        POSTGRESQL_ADDON_PASSWORD: 'x',
      },
    ),
    pgA,
  );
  assert.deepEqual(
    addonServerOf({ id: 'addon_r', provider: 'redis' }, { REDIS_HOST: gateway, REDIS_PORT: '6401', REDIS_PASSWORD: 'x' }),
    redisA,
  );
  assert.deepEqual(addonServerOf({ id: 'addon_m', provider: 'mysql' }, { MYSQL_ADDON_HOST: gateway, MYSQL_ADDON_PORT: '3306' }), {
    addonId: 'addon_m',
    provider: 'mysql',
    host: gateway,
    port: 3306,
  });
  assert.equal(addonServerOf({ id: 'addon_r', provider: 'redis' }, {}), undefined, 'still being provisioned');
  assert.equal(addonServerOf({ id: 'addon_r', provider: 'redis' }, { REDIS_HOST: gateway, REDIS_PORT: 'eighty' }), undefined);
});

test('pg_hba.conf refuses what is not a slipway database or a sandbox address', () => {
  const access = { hostAddresses: [gateway], appSubnet: '10.77.0.0/16' };
  assert.throws(
    () => hbaConf({ ...access, clients: [{ database: 'all', role: 'addon_0000000a', address: '10.77.0.2' }] }),
    /not a PostgreSQL add-on identifier/,
  );
  assert.throws(
    () => hbaConf({ ...access, clients: [{ database: 'addon_0000000a', role: 'addon_0000000a', address: '10.78.0.2' }] }),
    /not in the sandbox subnet 10\.77\.0\.0\/16/,
  );
  assert.throws(
    () => hbaConf({ ...access, clients: [{ database: 'addon_0000000a', role: 'addon_0000000a', address: '0.0.0.0/0' }] }),
    /not an IPv4 address/,
  );
});
