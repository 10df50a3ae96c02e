import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PostgresqlProvider } from './postgresql/postgresql-provider.js';
import { readPidFile } from '../executor/pid-file.js';
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

describe('postgresql add-on provider: a server of its own per add-on', {
  skip: process.getuid?.() !== 0 && 'needs root (server users, control groups, instance network)',
}, () => {
  let dataDir: string;
  let provider: PostgresqlProvider;
  let network: TestInstanceNetwork;
  const cgroupRoot = `slipway-pgtest-${process.pid}`;
  const options = () => ({ dataDir, gatewayAddress: network.gateway, cgroupRoot });

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'slipway-pg-test-'));
    await chmod(dataDir, 0o755); // the server users must be able to enter it
    network = await startInstanceNetwork('p');
    // As after a kill -9 of the daemon: the bridge holds the gateway but has no carrier.
    await network.leaveWithoutPort();
    provider = new PostgresqlProvider(options());
  });

  after(async () => {
    await provider?.stop();
    await network?.remove();
    await rm(dataDir, { recursive: true, force: true });
  });

  let first: Record<string, string>;
  let second: Record<string, string>;
  let firstConfig: Record<string, string>;
  let secondConfig: Record<string, string>;

  test('start makes no shared cluster; each add-on gets a server of its own, user and port included', async () => {
    await provider.start();
    await assert.rejects(stat(join(dataDir, 'postgresql', 'data')), /ENOENT/);
    firstConfig = (await provider.provision({ id: 'addon_0000000a-0000-4000-8000-00000000000a', name: 'first' })).config;
    secondConfig = (
      await provider.provision({ id: 'addon_0000000b-0000-4000-8000-00000000000b', name: `second"; DROP ROLE slipway_admin; --` })
    ).config;
    first = provider.env(firstConfig);
    second = provider.env(secondConfig);
    assert.equal(firstConfig.mode, 'dedicated');
    assert.notEqual(first.POSTGRESQL_ADDON_PORT, second.POSTGRESQL_ADDON_PORT, 'a port each');
    const folder = join(dataDir, 'postgresql', 'addon_0000000a-0000-4000-8000-00000000000a');
    const pgdata = await stat(join(folder, 'data'));
    const other = await stat(join(dataDir, 'postgresql', 'addon_0000000b-0000-4000-8000-00000000000b', 'data'));
    assert.ok(pgdata.uid >= 2_300_000 && pgdata.uid <= 2_399_999, `its own user (uid ${pgdata.uid})`);
    assert.notEqual(pgdata.uid, other.uid, 'a user each');
    assert.equal(pgdata.mode & 0o777, 0o700);
    assert.equal((await stat(folder)).mode & 0o777, 0o750, 'the folder is closed to other accounts');
    assert.equal((await stat(join(folder, 'admin-password'))).mode & 0o777, 0o600);
    const settings = await provider.servers!.running('addon_0000000a-0000-4000-8000-00000000000a')!.adminTarget;
    assert.ok(settings, 'the server answers its superuser');
  });

  test('the injected values work through the gateway; the plan sizes the server', async () => {
    assert.equal(first.POSTGRESQL_ADDON_HOST, network.gateway);
    assert.match(first.POSTGRESQL_ADDON_DB!, /^addon_[0-9a-f]{16}$/);
    assert.equal(first.POSTGRESQL_ADDON_USER, first.POSTGRESQL_ADDON_DB);
    assert.equal(
      first.POSTGRESQL_ADDON_URI,
      `postgresql://${first.POSTGRESQL_ADDON_USER}:${first.POSTGRESQL_ADDON_PASSWORD}@${network.gateway}:${first.POSTGRESQL_ADDON_PORT}/${first.POSTGRESQL_ADDON_DB}`,
    );
    const viaUri = new pg.Client({ connectionString: first.POSTGRESQL_ADDON_URI });
    await viaUri.connect();
    await viaUri.query('CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)');
    await viaUri.query('INSERT INTO notes (body) VALUES ($1)', ['hello']);
    const { rows } = await viaUri.query<{ body: string; addr: string }>('SELECT body, host(inet_server_addr()) AS addr FROM notes');
    assert.deepEqual(rows, [{ body: 'hello', addr: network.gateway }]);
    const sizing = await viaUri.query<{ name: string; setting: string }>(
      `SELECT name, setting FROM pg_settings WHERE name IN ('shared_buffers', 'max_connections') ORDER BY name`,
    );
    assert.deepEqual(sizing.rows, [
      { name: 'max_connections', setting: '10' },
      { name: 'shared_buffers', setting: String((32 * 1024) / 8) }, // in 8 kB pages
    ]);
    await viaUri.end();
    assert.match(provider.limits, /a server of its own with 256 MiB of memory.*shared_buffers 32 MiB, max_connections 10/);
  });

  test("one add-on's credentials do not open another's server", async () => {
    const err = await canConnect(second, { port: Number(first.POSTGRESQL_ADDON_PORT), database: second.POSTGRESQL_ADDON_DB });
    assert.ok(err instanceof Error && /password authentication failed|does not exist/.test(err.message), String(err));
    const wrong = await canConnect(first, { password: 'wrong' });
    assert.ok(wrong instanceof Error && /password authentication failed/.test(wrong.message), String(wrong));
  });

  test('the servers keep their data across stop and start', async () => {
    await provider.stop();
    assert.notEqual(await canConnect(first), true, 'stopped server refuses connections');
    await provider.start();
    await provider.resume({ id: 'addon_0000000a-0000-4000-8000-00000000000a' }, firstConfig);
    await provider.resume({ id: 'addon_0000000b-0000-4000-8000-00000000000b' }, secondConfig);
    const client = await connect(first);
    const { rows } = await client.query<{ body: string }>('SELECT body FROM notes');
    assert.deepEqual(rows, [{ body: 'hello' }]);
    await client.end();
  });

  test('a daemon that lets go leaves the servers and their client rules; the next one adopts both', async () => {
    const id = 'addon_0000000a-0000-4000-8000-00000000000a';
    const folder = join(dataDir, 'postgresql', id);
    const instance = network.gateway.replace(/\.1$/, '.9');
    const rule = new RegExp(
      `^host\\s+${first.POSTGRESQL_ADDON_DB}\\s+${first.POSTGRESQL_ADDON_USER}\\s+${instance.replaceAll('.', '\\.')}/32`,
      'm',
    );
    await provider.allowClients([{ database: first.POSTGRESQL_ADDON_DB!, role: first.POSTGRESQL_ADDON_USER!, address: instance }]);
    assert.match(await readFile(join(folder, 'pg_hba.conf'), 'utf8'), rule);
    assert.doesNotMatch(
      await readFile(join(dataDir, 'postgresql', 'addon_0000000b-0000-4000-8000-00000000000b', 'pg_hba.conf'), 'utf8'),
      rule,
      "the other add-on's server does not open to it",
    );
    const pid = await readPidFile(join(folder, 'data', 'postmaster.pid'));

    await provider.detach();
    assert.equal(pidAlive(pid!), true, 'it serves on');
    const successor = new PostgresqlProvider(options());
    await successor.start();
    await successor.resume({ id }, firstConfig);
    assert.equal(successor.servers!.running(id)!.timings!.adopted, true);
    assert.equal(await readPidFile(join(folder, 'data', 'postmaster.pid')), pid, 'not restarted');
    assert.match(await readFile(join(folder, 'pg_hba.conf'), 'utf8'), rule);
    await successor.allowClients([]);
    assert.doesNotMatch(await readFile(join(folder, 'pg_hba.conf'), 'utf8'), rule);
    await successor.detach();
    await provider.start(); // the provider in use takes them back for the next tests
    await provider.resume({ id }, firstConfig);
    await provider.resume({ id: 'addon_0000000b-0000-4000-8000-00000000000b' }, secondConfig);
    assert.equal(await readPidFile(join(folder, 'data', 'postmaster.pid')), pid);
    assert.equal(await canConnect(first), true);
  });

  test('an external server configured by admin URL provisions a database and a role on it', async () => {
    const folder = join(dataDir, 'postgresql', 'addon_0000000b-0000-4000-8000-00000000000b');
    const password = (await readFile(join(folder, 'admin-password'), 'utf8')).trim();
    const external = new PostgresqlProvider({
      dataDir,
      gatewayAddress: network.gateway,
      externalUrl: `postgresql://slipway_admin:${password}@${network.gateway}:${second.POSTGRESQL_ADDON_PORT}/postgres`,
    });
    await external.start();
    const config = (await external.provision({ id: 'x1', name: 'ext' })).config;
    assert.equal(config.mode, 'external');
    const env = external.env(config);
    assert.equal(env.POSTGRESQL_ADDON_HOST, network.gateway);
    assert.equal(await canConnect(env), true);
    await external.deprovision({ id: 'x1' }, config);
    assert.notEqual(await canConnect(env), true);
    await external.stop();
    await assert.rejects(provider.deprovision({ id: 'x1' }, config), /external PostgreSQL server/);
  });

  test('deprovision stops the server and removes its folder and user, even with a session open', async () => {
    const id = 'addon_0000000a-0000-4000-8000-00000000000a';
    const open = await connect(first);
    const uid = (await stat(join(dataDir, 'postgresql', id, 'data'))).uid;
    await provider.deprovision({ id }, firstConfig);
    await assert.rejects(open.query('SELECT 1'));
    assert.notEqual(await canConnect(first), true);
    await assert.rejects(stat(join(dataDir, 'postgresql', id)), /ENOENT/);
    const passwd = await readFile('/etc/passwd', 'utf8');
    assert.ok(!passwd.split('\n').some((line) => line.split(':')[2] === String(uid)), 'its user is gone');
    assert.equal(await canConnect(second), true, 'the other add-on serves on');
    // Idempotent.
    await provider.deprovision({ id }, firstConfig);
  });
});
