/**
 * Two apps' sandboxes (network namespaces of the instance backend on a bridge of the test's own)
 * against real add-on servers behind slipway's real firewall table, wired as the daemon wires
 * them (the test announces the sandboxes, as the backend does for instances): an add-on is
 * reached only from the sandboxes of the apps linked to it, and access follows links, starts and
 * stops. The table has a name of its own; forwarding is switched in a file of the test's own.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../src/store/store.js';
import { AddonManager } from '../../src/addons/addon-manager.js';
import { makeAddonProviders } from '../../src/addons/registry.js';
import { PostgresqlProvider } from '../../src/addons/postgresql/postgresql-provider.js';
import { Firewall, NFT } from '../../src/network/firewall.js';
import { AddonAccess } from '../../src/network/addon-access-sync.js';
import { addonCatalog } from '../../src/network/addon-catalog.js';
import { freePort } from '../support/free-port.js';
import { startInstanceNetwork, type TestInstanceNetwork, type TestSandboxNetwork } from '../support/instance-network.js';

const skip =
  process.getuid?.() !== 0
    ? "network namespaces, nftables and the add-on servers' users need root"
    : !existsSync(NFT)
      ? `${NFT} is missing (apt-get install nftables)`
      : !existsSync('/usr/bin/psql') || !existsSync('/usr/bin/redis-server')
        ? 'PostgreSQL and Redis are not installed (scripts/debian-packages.txt)'
        : false;

let gateway: string;
let addressA: string;
let addressB: string;

let dir: string;
let store: Store;
let addons: AddonManager;
let providers: ReturnType<typeof makeAddonProviders>;
let firewall: Firewall;
let access: AddonAccess;
let network: TestInstanceNetwork;
let nsA: TestSandboxNetwork;
let nsB: TestSandboxNetwork;
let appA: string;
let appB: string;
let dbA: Record<string, string>;
let dbB: Record<string, string>;
let cacheA: Record<string, string>;
let cacheAId: string;
let dbAId: string;
let dbBId: string;

/** What a TCP connection from a namespace to host:port gives: connected, timeout (dropped) or an error code. */
function probe(ns: TestSandboxNetwork, host: string, port: string): string {
  const script =
    "const s=require('net').connect({host:process.argv[1],port:+process.argv[2]});s.setTimeout(1500);" +
    "s.on('connect',()=>{console.log('connected');s.destroy()});s.on('timeout',()=>{console.log('timeout');s.destroy()});s.on('error',e=>console.log(e.code))";
  return ns.exec([process.execPath, '-e', script, host, port]).trim();
}

/** psql from a namespace with an add-on's variables: the current database, or the error. */
function psql(ns: TestSandboxNetwork, env: Record<string, string>): string {
  try {
    return ns.exec(['psql', env.POSTGRESQL_ADDON_URI!, '-tA', '-c', 'SELECT current_database()'], { PGCONNECT_TIMEOUT: '3' }).trim();
  } catch (error) {
    return String((error as { stderr?: string }).stderr ?? error);
  }
}

/** The pg_hba.conf of both PostgreSQL add-ons' servers (each add-on has its own), one after the other. */
function hbaFile(): string {
  return [dbAId, dbBId].map((id) => readFileSync(join(dir, 'postgresql', id, 'pg_hba.conf'), 'utf8')).join('\n');
}

before(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'slipway-addon-access-'));
  chmodSync(dir, 0o755); // the add-on servers' users must enter it
  writeFileSync(join(dir, 'ip_forward'), '1\n');
  // No one is told of these sandboxes yet: the tests announce them to the add-on access.
  network = await startInstanceNetwork('a');
  nsA = await network.sandbox('shop');
  nsB = await network.sandbox('blog');
  [gateway, addressA, addressB] = [network.gateway, nsA.address, nsB.address];

  store = Store.open(join(dir, 'slipway.db'));
  const org = store.orgs.create('acme');
  appA = store.apps.create({ orgId: org.id, name: 'shop', type: 'node', region: 'par' }).id;
  appB = store.apps.create({ orgId: org.id, name: 'blog', type: 'node', region: 'par' }).id;
  const redisFirst = 17700 + Math.floor(Math.random() * 200);
  providers = makeAddonProviders({
    dataDir: dir,
    gatewayAddress: gateway,
    postgresPort: await freePort(),
    redisPortRange: [redisFirst, redisFirst + 9],
  });
  addons = new AddonManager({ store, providers, log: () => undefined });

  firewall = new Firewall({
    table: network.bridge,
    bridge: network.bridge,
    subnet: network.subnet,
    gateway,
    routerPorts: [],
    forwarding: { sysctl: join(dir, 'ip_forward'), marker: join(dir, 'marker') },
  });
  await firewall.start();
  const postgresql = providers.get('postgresql');
  access = new AddonAccess({
    firewall,
    gateway,
    catalog: addonCatalog(store, addons),
    postgresql: postgresql instanceof PostgresqlProvider ? postgresql : undefined,
    log: (line) => console.log(line),
  });
  store.links.onAddonLinksChanged(() => void access.linksChanged());

  const a = await addons.create({ orgId: org.id, provider: 'postgresql', name: 'shop-db' });
  const b = await addons.create({ orgId: org.id, provider: 'postgresql', name: 'blog-db' });
  const c = await addons.create({ orgId: org.id, provider: 'redis', name: 'shop-cache' });
  [dbA, dbB, cacheA, cacheAId, dbAId, dbBId] = [addons.env(a), addons.env(b), addons.env(c), c.id, a.id, b.id];
  store.links.linkAddon(appA, a.id);
  store.links.linkAddon(appA, c.id);
  store.links.linkAddon(appB, b.id);
});

after(async () => {
  if (skip) return;
  await access?.idle();
  await addons?.stop();
  await firewall?.stop().catch(() => undefined);
  await nsA?.release();
  await nsB?.release();
  await network?.remove();
  store?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('before its sandbox is announced, an address reaches nothing', { skip }, async () => {
  await access.idle();
  assert.equal(probe(nsA, gateway, dbA.POSTGRESQL_ADDON_PORT!), 'timeout');
  assert.equal(probe(nsA, gateway, cacheA.REDIS_PORT!), 'timeout');
  assert.doesNotMatch(hbaFile(), new RegExp(addressA.replaceAll('.', '\\.')));
});

test("an instance reaches its own app's add-ons with their variables", { skip }, async () => {
  const began = performance.now();
  await access.attached({ appId: appA, kind: 'instance', address: addressA });
  console.log(
    `announcing a sandbox linked to PostgreSQL and Redis took ${Math.round(performance.now() - began)} ms (nft sets, pg_hba.conf reloaded)`,
  );
  await access.attached({ appId: appB, kind: 'instance', address: addressB });
  assert.equal(psql(nsA, dbA), dbA.POSTGRESQL_ADDON_DB);
  assert.equal(psql(nsB, dbB), dbB.POSTGRESQL_ADDON_DB);
  assert.equal(
    nsA.exec(['redis-cli', '-h', gateway, '-p', cacheA.REDIS_PORT!, 'PING'], { REDISCLI_AUTH: cacheA.REDIS_PASSWORD! }).trim(),
    'PONG',
  );
});

test("another app's instance cannot reach them, even with their passwords", { skip }, async () => {
  // Each database is a server of its own on a port of its own: the firewall drops the other app
  // before the server sees it, and its pg_hba.conf would refuse that address anyway.
  assert.notEqual(dbA.POSTGRESQL_ADDON_PORT, dbB.POSTGRESQL_ADDON_PORT);
  assert.match(psql(nsB, dbA), /timeout expired/);
  assert.equal(probe(nsB, gateway, dbA.POSTGRESQL_ADDON_PORT!), 'timeout');
  assert.doesNotMatch(
    readFileSync(join(dir, 'postgresql', dbAId, 'pg_hba.conf'), 'utf8'),
    new RegExp(`${addressB.replaceAll('.', '\\.')}/32`),
  );
  // Not linked to any Redis: the firewall drops it before the server sees it.
  assert.equal(probe(nsB, gateway, cacheA.REDIS_PORT!), 'timeout');
});

test('unlinking closes the add-on to the app at once', { skip }, async () => {
  assert.equal(probe(nsA, gateway, cacheA.REDIS_PORT!), 'connected');
  store.links.unlinkAddon(appA, cacheAId);
  await access.idle();
  assert.equal(probe(nsA, gateway, cacheA.REDIS_PORT!), 'timeout');
  assert.equal(psql(nsA, dbA), dbA.POSTGRESQL_ADDON_DB, 'the other link still works');
});

test("a build counts as its app's sandbox; a stopped sandbox's address is closed everywhere", { skip }, async () => {
  await access.detached(addressB);
  assert.equal(probe(nsB, gateway, dbB.POSTGRESQL_ADDON_PORT!), 'timeout');
  assert.doesNotMatch(hbaFile(), new RegExp(`${addressB.replaceAll('.', '\\.')}/32`));

  // The address is given to a build of the other app: it gets that app's database, not its old one.
  await access.attached({ appId: appA, kind: 'build', address: addressB });
  assert.equal(psql(nsB, dbA), dbA.POSTGRESQL_ADDON_DB);
  assert.match(psql(nsB, dbB), /timeout expired/);
  await access.detached(addressB);
  await access.detached(addressA);
  assert.equal(probe(nsA, gateway, dbA.POSTGRESQL_ADDON_PORT!), 'timeout');
  assert.doesNotMatch(hbaFile(), /^host\s+addon_/m);
});
