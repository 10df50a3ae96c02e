// Add-on servers started by the registry's providers as the daemon starts them (root only: server
// users, a network namespace for the app), reached as an app reaches them. The registry's own
// checks are in registry.test.ts, in the unit suite.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { freePort } from '../../test/support/free-port.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddonProvider } from './provider.js';
import { makeAddonProviders } from './registry.js';
import { startInstanceNetwork, type TestInstanceNetwork, type TestSandboxNetwork } from '../../test/support/instance-network.js';
import type { PostgresqlProvider } from './postgresql/postgresql-provider.js';

test('a data folder the server users cannot enter is reported with the fix', {
  skip: process.getuid?.() !== 0 && 'needs root (server users)',
}, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'slipway-addons-private-')); // mode 0700, root
  try {
    const providers = makeAddonProviders({ dataDir, gatewayAddress: '127.0.0.1', postgresPort: await freePort() });
    await assert.rejects(providers.get('postgresql')!.start(), /"slp-… \(each add-on server's user\)" cannot enter .*chmod o\+x/);
    await assert.rejects(providers.get('redis')!.start(), /"slipway-redis" cannot enter .*chmod o\+x/);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

describe('an app in its own network namespace reaches add-ons with the injected values', {
  skip: process.getuid?.() !== 0 && 'needs root (network namespaces)',
}, () => {
  let dataDir: string;
  let providers: Map<string, AddonProvider>;
  let network: TestInstanceNetwork;
  let app: TestSandboxNetwork;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'slipway-addons-netns-'));
    await chmod(dataDir, 0o755);
    network = await startInstanceNetwork('g');
    // Started while the bridge has no port (no carrier), as after a kill -9 of the daemon.
    await network.leaveWithoutPort();
    providers = makeAddonProviders({
      dataDir,
      gatewayAddress: network.gateway,
      postgresPort: await freePort(),
      redisPortRange: [17660, 17669],
    });
    await Promise.all([...providers.values()].map((provider) => provider.start()));
    app = await network.sandbox('app');
  });

  after(async () => {
    await Promise.all([...(providers?.values() ?? [])].map((provider) => provider.stop()));
    await app?.release();
    await network?.remove();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('PostgreSQL through POSTGRESQL_ADDON_URI, from the sandbox', async () => {
    const postgresql = providers.get('postgresql')!;
    const config = (await postgresql.provision({ id: 'p1', name: 'db' })).config;
    const env = postgresql.env(config);
    const query = ['psql', env.POSTGRESQL_ADDON_URI!, '-tA', '-c', "SELECT inet_client_addr()::text || ' ' || current_user"];
    // Nothing in the subnet is let in until the address is given the database (its app linked).
    assert.throws(() => app.exec(query), new RegExp(`no pg_hba\\.conf entry for host "${app.address.replaceAll('.', '\\.')}"`));
    await (postgresql as PostgresqlProvider).allowClients([
      { database: env.POSTGRESQL_ADDON_DB!, role: env.POSTGRESQL_ADDON_USER!, address: app.address },
    ]);
    const out = app.exec(query);
    assert.equal(out.trim(), `${app.address}/32 ${env.POSTGRESQL_ADDON_USER}`);
    await postgresql.deprovision({ id: 'p1' }, config);
  });

  test('Redis through REDIS_URL, from the sandbox', async () => {
    const redis = providers.get('redis')!;
    const config = (await redis.provision({ id: 'r1', name: 'cache' })).config;
    const env = redis.env(config);
    // REDISCLI_AUTH keeps the password off redis-cli's own command line.
    const cli = ['redis-cli', '-h', env.REDIS_HOST!, '-p', env.REDIS_PORT!];
    const secret = { REDISCLI_AUTH: env.REDIS_PASSWORD! };
    assert.equal(app.exec([...cli, 'SET', 'k', 'from-netns'], secret).trim(), 'OK');
    assert.equal(app.exec([...cli, 'GET', 'k'], secret).trim(), 'from-netns');
    assert.match(app.exec([...cli, 'GET', 'k']), /NOAUTH/);
    await redis.deprovision({ id: 'r1' }, config);
  });
});
