import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../test/support/free-port.js';
import pg from 'pg';
import { PostgresqlProvider } from './postgresql/postgresql-provider.js';
import { hbaConf, initdbArgv, postgresArgv } from './postgresql/cluster-config.js';
import { createDatabaseSql, createRoleSql, dropSql } from './postgresql/provisioning-sql.js';
import { readPidFile } from './server-process.js';
import { pidAlive } from '../executor/pid-alive.js';
import { startInstanceNetwork, type TestInstanceNetwork } from '../../test/support/instance-network.js';

async function connect(env: Record<string, string>, overrides: pg.ClientConfig = {}): Promise<pg.Client> {
  const client = new pg.Client({
    host: env.POSTGRESQL_ADDON_HOST,
    port: Number(env.POSTGRESQL_ADDON_PORT),
    user: env.POSTGRESQL_ADDON_USER,
    password: env.POSTGRESQL_ADDON_PASSWORD,
    database: env.POSTGRESQL_ADDON_DB,
    connectionTimeoutMillis: 5000,
    ...overrides,
  });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

async function canConnect(env: Record<string, string>, overrides: pg.ClientConfig = {}): Promise<unknown> {
  try {
    const client = await connect(env, overrides);
    await client.end();
    return true;
  } catch (err) {
    return err;
  }
}

describe('postgresql statements and argv (pure)', () => {
  test("identifiers must be slipway's own addon_<hex> form", () => {
    assert.throws(() => createRoleSql('bob"; DROP TABLE x; --', 'pw'), /not a PostgreSQL add-on identifier/);
    assert.throws(() => dropSql('addon_1234abcd', 'postgres'), /not a PostgreSQL add-on identifier/);
    assert.throws(() => createDatabaseSql('Addon_1234ABCD', 'addon_1234abcd'), /not a PostgreSQL add-on identifier/);
  });

  test('the password reaches the server only as a SCRAM verifier', () => {
    const sql = createRoleSql('addon_1234abcd', 'plaintext-secret');
    assert.match(sql, /^CREATE ROLE "addon_1234abcd" LOGIN .* PASSWORD 'SCRAM-SHA-256\$4096:/);
    assert.ok(!sql.includes('plaintext-secret'));
  });

  test('databases are closed to PUBLIC', () => {
    assert.deepEqual(createDatabaseSql('addon_1234abcd', 'addon_1234abcd').slice(1), [
      'REVOKE ALL ON DATABASE "addon_1234abcd" FROM PUBLIC',
      'GRANT ALL ON DATABASE "addon_1234abcd" TO "addon_1234abcd"',
    ]);
  });

  test('argv arrays and pg_hba.conf', () => {
    assert.deepEqual(initdbArgv('/b/initdb', '/d', '/p').slice(0, 5), ['/b/initdb', '--pgdata', '/d', '--username', 'slipway_admin']);
    const argv = postgresArgv(
      '/b/postgres',
      { dataDir: '/d', socketDir: '/s', hbaFile: '/h', walSpoolDir: '/w' },
      ['127.0.0.1', '10.77.0.1'],
      5433,
    );
    assert.ok(argv.includes('listen_addresses=127.0.0.1,10.77.0.1'));
    assert.ok(argv.includes('port=5433'));
    const hba = hbaConf({
      hostAddresses: ['127.0.0.1', '10.77.0.1'],
      appSubnet: '10.77.0.0/16',
      clients: [{ database: 'addon_1234abcd', role: 'addon_1234abcd', address: '10.77.0.6' }],
    });
    assert.match(hba, /^host\s+all\s+all\s+10\.77\.0\.1\/32\s+scram-sha-256$/m);
    assert.match(hba, /^host\s+addon_1234abcd\s+addon_1234abcd\s+10\.77\.0\.6\/32\s+scram-sha-256$/m);
    assert.doesNotMatch(hba, /10\.77\.0\.0\/16/, 'the subnet as a whole is not let in');
    assert.doesNotMatch(hba, /trust|peer|ident/);
  });
});

describe('postgresql add-on provider with a real embedded cluster', {
  skip: process.getuid?.() !== 0 && 'needs root (server user, instance network)',
}, () => {
  let dataDir: string;
  let port: number;
  let provider: PostgresqlProvider;
  let network: TestInstanceNetwork;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'slipway-pg-test-'));
    await chmod(dataDir, 0o755); // the server user must be able to enter it
    port = await freePort();
    network = await startInstanceNetwork('p');
    // As after a kill -9 of the daemon: the bridge holds the gateway but has no carrier.
    await network.leaveWithoutPort();
    provider = new PostgresqlProvider({ dataDir, gatewayAddress: network.gateway, port });
  });

  after(async () => {
    await provider?.stop();
    await network?.remove();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('start initialises a cluster owned by the server user and listens on loopback and the gateway', async () => {
    await provider.start();
    const timings = provider.cluster!.timings!;
    assert.ok(timings.initdbMs! > 0, 'initdb ran');
    console.log(`initdb ${timings.initdbMs} ms, start ${timings.startMs} ms`);
    const pgdata = join(dataDir, 'postgresql', 'data');
    const info = await stat(pgdata);
    assert.notEqual(info.uid, 0, 'cluster files do not belong to root');
    assert.equal(info.mode & 0o777, 0o700);
    assert.equal((await stat(join(dataDir, 'postgresql', 'admin-password'))).mode & 0o777, 0o600);
  });

  let first: Record<string, string>;
  let second: Record<string, string>;
  let firstConfig: Record<string, string>;

  test('provision gives working credentials through the gateway and loopback', async () => {
    firstConfig = (await provider.provision({ id: 'a1', name: 'first' })).config;
    first = provider.env(firstConfig);
    second = provider.env((await provider.provision({ id: 'a2', name: `second"; DROP ROLE slipway_admin; --` })).config);
    assert.equal(first.POSTGRESQL_ADDON_HOST, network.gateway);
    assert.equal(first.POSTGRESQL_ADDON_PORT, String(port));
    assert.match(first.POSTGRESQL_ADDON_DB!, /^addon_[0-9a-f]{16}$/);
    assert.equal(first.POSTGRESQL_ADDON_USER, first.POSTGRESQL_ADDON_DB);
    assert.equal(first.POSTGRESQL_ADDON_VERSION, String(provider.cluster!.major));
    assert.equal(
      first.POSTGRESQL_ADDON_URI,
      `postgresql://${first.POSTGRESQL_ADDON_USER}:${first.POSTGRESQL_ADDON_PASSWORD}@${network.gateway}:${port}/${first.POSTGRESQL_ADDON_DB}`,
    );

    // Exactly the injected values, as an app would use them (the gateway address).
    const viaUri = new pg.Client({ connectionString: first.POSTGRESQL_ADDON_URI });
    await viaUri.connect();
    await viaUri.query('CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)');
    await viaUri.query('INSERT INTO notes (body) VALUES ($1)', ['hello']);
    const { rows } = await viaUri.query<{ body: string; addr: string }>('SELECT body, host(inet_server_addr()) AS addr FROM notes');
    assert.deepEqual(rows, [{ body: 'hello', addr: network.gateway }]);
    await viaUri.end();

    const viaLoopback = await connect(first, { host: '127.0.0.1' });
    const { rows: count } = await viaLoopback.query<{ n: number }>('SELECT count(*)::int AS n FROM notes');
    assert.deepEqual(count, [{ n: 1 }]);
    await viaLoopback.end();
  });

  test('a wrong password is refused', async () => {
    const err = await canConnect(first, { password: 'wrong' });
    assert.ok(err instanceof Error && /password authentication failed/.test(err.message), String(err));
  });

  test("one add-on cannot open or read another add-on's database", async () => {
    const err = await canConnect(second, { database: first.POSTGRESQL_ADDON_DB });
    assert.ok(err instanceof Error, 'connection must be refused');
    assert.match(err.message, /permission denied for database/);
    const other = await connect(second);
    // Nor reach it through the owner role.
    await assert.rejects(other.query(`SET ROLE ${first.POSTGRESQL_ADDON_USER}`), /permission denied/);
    await other.end();
  });

  test('the cluster keeps its data across stop and start (no second initdb)', async () => {
    await provider.stop();
    assert.notEqual(await canConnect(first), true, 'stopped server refuses connections');
    await provider.start();
    await provider.resume({ id: 'a1' }, firstConfig);
    assert.equal(provider.cluster!.timings!.initdbMs, undefined);
    console.log(`restart ${provider.cluster!.timings!.startMs} ms`);
    const client = await connect(first);
    const { rows } = await client.query<{ body: string }>('SELECT body FROM notes');
    assert.deepEqual(rows, [{ body: 'hello' }]);
    await client.end();
  });

  test('a server left running by a crashed daemon is adopted, not duplicated', async () => {
    const pid = await readPidFile(join(dataDir, 'postgresql', 'data', 'postmaster.pid'));
    const replacement = new PostgresqlProvider({ dataDir, gatewayAddress: network.gateway, port });
    await replacement.start();
    assert.equal(replacement.cluster!.timings!.adopted, true);
    assert.equal(await canConnect(first), true);
    await replacement.stop();
    assert.equal(pidAlive(pid!), false, 'the adopted server was stopped');
    await provider.stop();
    await provider.start();
    assert.equal(await canConnect(first), true);
  });

  test('a daemon that lets go leaves the server and its client rules; the next one adopts both', async () => {
    const hbaFile = join(dataDir, 'postgresql', 'pg_hba.conf');
    const instance = network.gateway.replace(/\.1$/, '.9');
    const rule = new RegExp(
      `^host\\s+${first.POSTGRESQL_ADDON_DB}\\s+${first.POSTGRESQL_ADDON_USER}\\s+${instance.replaceAll('.', '\\.')}/32`,
      'm',
    );
    await provider.allowClients([{ database: first.POSTGRESQL_ADDON_DB!, role: first.POSTGRESQL_ADDON_USER!, address: instance }]);
    assert.match(await readFile(hbaFile, 'utf8'), rule);
    const pid = await readPidFile(join(dataDir, 'postgresql', 'data', 'postmaster.pid'));

    await provider.detach();
    assert.equal(pidAlive(pid!), true, 'it serves on');
    const successor = new PostgresqlProvider({ dataDir, gatewayAddress: network.gateway, port });
    await successor.start();
    assert.equal(successor.cluster!.timings!.adopted, true);
    assert.equal(await readPidFile(join(dataDir, 'postgresql', 'data', 'postmaster.pid')), pid, 'not restarted');
    // Until the new daemon names the sandboxes, the instance that outlived the old one keeps its access.
    assert.match(await readFile(hbaFile, 'utf8'), rule);
    await successor.allowClients([]);
    assert.doesNotMatch(await readFile(hbaFile, 'utf8'), rule);

    await successor.detach();
    await provider.start(); // the provider in use takes it back for the next tests
    assert.equal(await readPidFile(join(dataDir, 'postgresql', 'data', 'postmaster.pid')), pid);
    assert.equal(await canConnect(first), true);
  });

  test('an external server configured by admin URL provisions the same way', async () => {
    const password = (await readFile(join(dataDir, 'postgresql', 'admin-password'), 'utf8')).trim();
    const external = new PostgresqlProvider({
      dataDir,
      gatewayAddress: network.gateway,
      externalUrl: `postgresql://slipway_admin:${password}@127.0.0.1:${port}/postgres`,
    });
    await external.start();
    const config = (await external.provision({ id: 'x1', name: 'ext' })).config;
    assert.equal(config.mode, 'external');
    const env = external.env(config);
    assert.equal(env.POSTGRESQL_ADDON_HOST, network.gateway, 'loopback is replaced by the gateway for apps');
    assert.equal(await canConnect(env), true);
    await external.deprovision({ id: 'x1' }, config);
    assert.notEqual(await canConnect(env), true);
    await external.stop();
    await assert.rejects(provider.deprovision({ id: 'x1' }, config), /external PostgreSQL server/);
  });

  test('deprovision drops the database and the role, even with a session open', async () => {
    const open = await connect(first);
    await provider.deprovision({ id: 'a1' }, firstConfig);
    await assert.rejects(open.query('SELECT 1'));
    const err = await canConnect(first);
    assert.ok(err instanceof Error && /password authentication failed|does not exist/.test(err.message), String(err));
    const witness = await connect(second);
    const { rows } = await witness.query(
      'SELECT 1 FROM pg_roles WHERE rolname = $1 UNION ALL SELECT 1 FROM pg_database WHERE datname = $1',
      [first.POSTGRESQL_ADDON_DB],
    );
    assert.equal(rows.length, 0);
    await witness.end();
    // Idempotent.
    await provider.deprovision({ id: 'a1' }, firstConfig);
  });
});
