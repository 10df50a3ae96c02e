import { dirname } from 'node:path';
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import type { PostgresqlProvider } from '../../addons/postgresql/postgresql-provider.js';
import { findPostgresBinaries } from '../../addons/postgresql/binaries.js';
import { ADMIN_ROLE } from '../../addons/postgresql/cluster-config.js';
import { assertAddonIdentifier } from '../../addons/postgresql/provisioning-sql.js';
import { asSuperuser } from '../../addons/postgresql/superuser-connection.js';
import { asAdmin } from './admin-client.js';
import { countRows, type LiveCluster, type RowCounts, userTables } from './base-backup.js';
import { dumpDatabase, loadDump } from './dump-load.js';

export interface MoveOptions {
  provider: PostgresqlProvider;
  addon: { id: string; name: string };
  /** Its stored configuration, on the shared cluster. */
  config: Record<string, string>;
  /**
   * Stores the new configuration and has the linked apps serve with it (a restart of each,
   * health-checked); resolves once they do. Writes to the add-on wait meanwhile.
   */
  switchApps(config: Record<string, string>): Promise<void>;
  /**
   * Holds the linked apps' new requests at the router and resolves once the requests already
   * with their instances are done; the function it resolves with lets the held ones go on.
   */
  holdApps(): Promise<() => Promise<void>>;
  log(line: string): void;
}

export interface MoveReport {
  config: Record<string, string>;
  tables: number;
  rows: number;
  /** How long the apps' requests were held: from the hold to the end of the switch. */
  heldMs: number;
}

/**
 * Moves one add-on from the PostgreSQL cluster shared by earlier versions to a server of its
 * own, with its role, password, data and extensions:
 *
 * 1. its server is prepared (postgresql-provider.ts `prepareOwnServer`): same role and
 *    password, the plan's limits, an empty database of the same name;
 * 2. the linked apps' new requests are held at the router (they wait, not refused) and those
 *    already with their instances finish; then, on the shared cluster, every table of its
 *    database is locked in EXCLUSIVE mode (what else writes, a worker, waits; a lock timeout of
 *    60 s, as for a backup's restore point), and the rows of each table are counted;
 * 3. pg_dump of the database (it reads beside the locks) is loaded by pg_restore as the add-on's
 *    own role into its server, and the counts are checked there;
 * 4. the apps switch: the configuration names the new server, each linked app restarts onto it,
 *    and the held requests go on, to the new instances;
 * 5. the database on the shared cluster is closed to connections and its last sessions ended
 *    (a write that still waited there, from a worker, gets an error, it does not land anywhere),
 *    and the locks go. The old database is kept, closed, until the shared cluster is retired.
 *
 * Anything failing before step 4 leaves the add-on where it was (its new server removed); it is
 * tried again at the next start.
 */
export async function moveToOwnServer(o: MoveOptions): Promise<MoveReport> {
  const cluster = o.provider.cluster;
  if (!cluster) throw new Error('No shared PostgreSQL cluster here to move an add-on from.');
  const database = o.config.database ?? '';
  const role = o.config.role ?? '';
  const password = o.config.password ?? '';
  assertAddonIdentifier(database);
  assertAddonIdentifier(role);
  const sharedLayout = cluster.layout;
  const shared: LiveCluster = {
    socketDir: sharedLayout.socketDir,
    port: cluster.port,
    password: (await readFile(sharedLayout.passwordFile, 'utf8')).trim(),
    binDir: dirname((await findPostgresBinaries(cluster.major)).postgres),
  };

  const prepared = await o.provider.prepareOwnServer(o.addon.id, o.config);
  const heldSince = Date.now();
  let letGo: (() => Promise<void>) | undefined;
  try {
    letGo = await o.holdApps();
  } catch (error) {
    await o.provider.abandonOwnServer(o.addon.id).catch(() => undefined);
    throw new Error(`The PostgreSQL add-on ${o.addon.name} stays on the shared cluster for now: ${(error as Error).message}`);
  }
  const own = prepared.server;
  const ownLive: LiveCluster = {
    socketDir: own.layout.socketDir,
    port: own.port,
    password: (await readFile(own.layout.passwordFile, 'utf8')).trim(),
    binDir: shared.binDir,
  };

  let release!: (commit: boolean) => void;
  const released = new Promise<boolean>((resolve) => {
    release = resolve;
  });
  let locked!: (counts: RowCounts) => void;
  let lockFailed!: (error: Error) => void;
  const counted = new Promise<RowCounts>((resolve, reject) => {
    locked = resolve;
    lockFailed = reject;
  });
  const holding = asAdmin(shared, database, async (client) => {
    await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
    await client.query(`SET LOCAL lock_timeout = '60s'`);
    const tables = await userTables(client);
    for (const table of tables) await client.query(`LOCK TABLE ONLY ${table} IN EXCLUSIVE MODE`);
    locked(await countRows(client, tables));
    await released;
    await client.query('ROLLBACK');
  }).catch((error: Error) => {
    lockFailed(new Error(`Could not hold the writes of the add-on's database: ${error.message}`));
  });

  let counts: RowCounts;
  try {
    counts = await counted;
    const dump = dumpDatabase(shared.binDir, sharedToolEnv(shared), database);
    await Promise.all([loadDump(ownLive, dump.stdout, { database, role, password }), dump.done]);
    const found = await asAdmin(ownLive, database, (client) => countRows(client, Object.keys(counts)));
    const wrong = Object.entries(counts).filter(([table, n]) => found[table] !== n);
    if (wrong.length > 0) {
      throw new Error(`the copy's row counts differ (${wrong.map(([t, n]) => `${t}: ${found[t]} for ${n}`).join('; ')})`);
    }
  } catch (error) {
    release(false);
    await holding;
    await letGo().catch(() => undefined);
    await o.provider.abandonOwnServer(o.addon.id).catch(() => undefined);
    throw new Error(`The PostgreSQL add-on ${o.addon.name} stays on the shared cluster for now: ${(error as Error).message}`);
  }

  try {
    await o.switchApps(prepared.config);
  } finally {
    await letGo().catch((error: Error) => o.log(`Letting the held requests of add-on ${o.addon.name}'s apps go on: ${error.message}`));
    // The old database takes no more connections, and what still waits on it ends.
    await asSuperuser(
      { host: shared.socketDir, port: shared.port, user: ADMIN_ROLE, password: shared.password },
      async (client) => {
        await client.query(`ALTER DATABASE ${pg.escapeIdentifier(database)} WITH ALLOW_CONNECTIONS false`);
        await client.query(
          'SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity WHERE datname OPERATOR(pg_catalog.=) $1 AND pid OPERATOR(pg_catalog.<>) pg_catalog.pg_backend_pid()',
          [database],
        );
      },
      { database: 'postgres' },
    ).catch((error: Error) => o.log(`Closing the moved database of add-on ${o.addon.name} on the shared cluster: ${error.message}`));
    release(false);
    await holding;
  }
  const rows = Object.values(counts).reduce((a, b) => a + b, 0);
  return { config: prepared.config, tables: Object.keys(counts).length, rows, heldMs: Date.now() - heldSince };
}

function sharedToolEnv(shared: LiveCluster): Record<string, string> {
  return { PATH: '/usr/bin:/bin', PGHOST: shared.socketDir, PGPORT: String(shared.port), PGUSER: ADMIN_ROLE, PGPASSWORD: shared.password };
}
