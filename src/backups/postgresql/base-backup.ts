import { asAdmin, type SocketTarget } from './admin-client.js';
import { runStreamed } from '../../executor/run-streamed.js';
import { join } from 'node:path';
import pg from 'pg';
import { ADMIN_ROLE } from '../../addons/postgresql/cluster-config.js';
import { pinnedToolEnv } from '../../addons/postgresql/superuser-connection.js';
import type { BackupStore } from '../store/backup-store.js';

/** How the daemon reaches the live cluster as its superuser: over the unix socket. */
export interface LiveCluster extends SocketTarget {
  binDir: string;
}

/**
 * Streams a base backup of the whole cluster (pg_basebackup, tar on stdout, no WAL: the archive
 * has it) into the store under `key`, its backup manifest (every file's SHA-256) inside the tar.
 * pg_basebackup returns once the WAL the backup needs is
 * archived, so the spool holds it when this resolves.
 */
export async function takeBaseBackup(cluster: LiveCluster, store: BackupStore, key: string): Promise<{ sizeBytes: number }> {
  const tool = streamBaseBackup(cluster, 'none');
  const stored = store.put(key, tool.stdout);
  const [ran, result] = await Promise.all([
    tool.done.then(
      () => undefined,
      (error: Error) => error,
    ),
    stored.catch((error: Error) => error),
  ]);
  if (ran) {
    await store.delete(key).catch(() => undefined);
    throw ran;
  }
  if (result instanceof Error) throw new Error(`The base backup could not be stored: ${result.message}`);
  return result;
}

/**
 * pg_basebackup of the live server as a tar on stdout: without WAL (`none`, the archive has it)
 * for a stored backup, or with the WAL it needs inside (`fetch`) for a fork started at once.
 */
export function streamBaseBackup(cluster: LiveCluster, wal: 'none' | 'fetch') {
  return runStreamed({
    argv: [
      join(cluster.binDir, 'pg_basebackup'),
      '-h',
      cluster.socketDir,
      '-p',
      String(cluster.port),
      '-U',
      ADMIN_ROLE,
      '-D',
      '-',
      '-F',
      't',
      '-X',
      wal,
      '--checkpoint=fast',
      // The manifest rides at the end of the tar: a restore checks every file against it.
      '--manifest-checksums=SHA256',
      '--no-password',
    ],
    env: pinnedToolEnv({ PATH: '/usr/bin:/bin', PGPASSWORD: cluster.password }),
    name: 'pg_basebackup',
  });
}

export type RowCounts = Record<string, number>;

/**
 * Names a restore point and counts the rows of each table of one add-on's database at that point.
 * Writers wait (SHARE locks, taken in the add-on's database) while the point is made and the rows
 * counted, so a restore to the point finds exactly these counts. Inside the tenant's database
 * this runs only what it must: the catalogue query, the locks and the counts (READ COMMITTED, so
 * each count sees every write committed before its lock). The restore point is cluster-wide and
 * is made from the maintenance database, where the tenant has nothing.
 */
export async function restorePointWithCounts(
  cluster: LiveCluster,
  database: string,
  name: string,
): Promise<{ counts: RowCounts; lsn: string }> {
  return asAdmin(cluster, database, async (client) => {
    try {
      await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
      await client.query(`SET LOCAL lock_timeout = '60s'`);
      const tables = await userTables(client);
      for (const table of tables) await client.query(`LOCK TABLE ONLY ${table} IN SHARE MODE`);
      const lsn = await asAdmin(cluster, 'postgres', async (maintenance) => {
        const point = await maintenance.query<{ lsn: string }>('SELECT pg_catalog.pg_create_restore_point($1)::pg_catalog.text AS lsn', [
          name,
        ]);
        return point.rows[0]?.lsn ?? '';
      });
      const counts = await countRows(client, tables);
      await client.query('COMMIT');
      return { counts, lsn };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw new Error(`Could not mark the backup's restore point: ${(error as Error).message}`);
    }
  });
}

/**
 * Every ordinary table of the database outside the system schemas, as a qualified, quoted name.
 * Operators are named with their schema: this runs inside a tenant's database.
 */
export async function userTables(client: pg.Client): Promise<string[]> {
  const rows = await client.query<{ schema: string; name: string }>(
    `SELECT n.nspname AS schema, c.relname AS name
       FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
      WHERE c.relkind OPERATOR(pg_catalog.=) 'r'
        AND n.nspname OPERATOR(pg_catalog.<>) ALL (ARRAY['pg_catalog', 'information_schema']::pg_catalog.name[])
        AND NOT n.nspname OPERATOR(pg_catalog.~~) 'pg\\_%'
      ORDER BY 1, 2`,
  );
  return rows.rows.map((r) => `${pg.escapeIdentifier(r.schema)}.${pg.escapeIdentifier(r.name)}`);
}

/**
 * The rows of each table given (qualified names from userTables), each table alone (ONLY: a
 * child table has its own count). A table that cannot be read says which.
 */
export async function countRows(client: pg.Client, tables: string[]): Promise<RowCounts> {
  const counts: RowCounts = {};
  for (const table of tables) {
    const row = await client.query<{ n: string }>(`SELECT pg_catalog.count(*) AS n FROM ONLY ${table}`).catch((error: Error) => {
      throw new Error(`table ${table} cannot be read: ${error.message}`);
    });
    counts[table] = Number(row.rows[0]?.n ?? 0);
  }
  return counts;
}

/**
 * Finishes the current WAL segment and waits until PostgreSQL archived it to the spool: what
 * happened up to now is then in the archive (once shipped).
 */
export async function switchAndAwaitArchive(cluster: LiveCluster, timeoutMs = 120_000): Promise<string> {
  return asAdmin(cluster, 'postgres', async (client) => {
    const switched = await client.query<{ segment: string }>('SELECT pg_catalog.pg_walfile_name(pg_catalog.pg_switch_wal()) AS segment');
    const segment = switched.rows[0]!.segment;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const state = await client.query<{ archived: string | null; failed: string | null }>(
        'SELECT last_archived_wal AS archived, last_failed_wal AS failed FROM pg_catalog.pg_stat_archiver',
      );
      const archived = state.rows[0]?.archived;
      if (archived && archived.slice(0, 24) >= segment) return segment;
      if (Date.now() > deadline) {
        throw new Error(`PostgreSQL has not archived WAL segment ${segment} yet (last failure: ${state.rows[0]?.failed ?? 'none'}).`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  });
}
