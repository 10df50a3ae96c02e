import { asAdmin, type SocketTarget } from './admin-client.js';
import { runStreamed } from '../../executor/run-streamed.js';
import { join } from 'node:path';
import pg from 'pg';
import { ADMIN_ROLE } from '../../addons/postgresql/cluster-config.js';
import type { BackupStore } from '../store/backup-store.js';

/** How the daemon reaches the live cluster as its superuser: over the unix socket. */
export interface LiveCluster extends SocketTarget {
  binDir: string;
}

/**
 * Streams a base backup of the whole cluster (pg_basebackup, tar on stdout, no WAL: the archive
 * has it) into the store under `key`. pg_basebackup returns once the WAL the backup needs is
 * archived, so the spool holds it when this resolves.
 */
export async function takeBaseBackup(cluster: LiveCluster, store: BackupStore, key: string): Promise<{ sizeBytes: number }> {
  const tool = runStreamed({
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
      'none',
      '--checkpoint=fast',
      '--no-password',
    ],
    env: { PATH: '/usr/bin:/bin', PGPASSWORD: cluster.password },
    name: 'pg_basebackup',
  });
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

export type RowCounts = Record<string, number>;

/**
 * Names a restore point in one add-on's database and counts the rows of each of its tables at
 * that point: writers wait (SHARE locks) while the point is made and the rows are counted, so a
 * restore to the point must find exactly these counts.
 */
export async function restorePointWithCounts(
  cluster: LiveCluster,
  database: string,
  name: string,
): Promise<{ counts: RowCounts; lsn: string }> {
  return asAdmin(cluster, database, async (client) => {
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await client.query(`SET LOCAL lock_timeout = '60s'`);
      const tables = await userTables(client);
      for (const table of tables) await client.query(`LOCK TABLE ${table} IN SHARE MODE`);
      const point = await client.query<{ lsn: string }>('SELECT pg_create_restore_point($1)::text AS lsn', [name]);
      const counts: RowCounts = {};
      for (const table of tables) {
        const row = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
        counts[table] = Number(row.rows[0]?.n ?? 0);
      }
      await client.query('COMMIT');
      return { counts, lsn: point.rows[0]?.lsn ?? '' };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw new Error(`Could not mark the backup's restore point: ${(error as Error).message}`);
    }
  });
}

/** Every ordinary table of the database outside the system schemas, as a quoted name. */
export async function userTables(client: pg.Client): Promise<string[]> {
  const rows = await client.query<{ schema: string; name: string }>(
    `SELECT n.nspname AS schema, c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
     ORDER BY 1, 2`,
  );
  return rows.rows.map((r) => `${pg.escapeIdentifier(r.schema)}.${pg.escapeIdentifier(r.name)}`);
}

/**
 * Finishes the current WAL segment and waits until PostgreSQL archived it to the spool: what
 * happened up to now is then in the archive (once shipped).
 */
export async function switchAndAwaitArchive(cluster: LiveCluster, timeoutMs = 120_000): Promise<string> {
  return asAdmin(cluster, 'postgres', async (client) => {
    const switched = await client.query<{ segment: string }>('SELECT pg_walfile_name(pg_switch_wal()) AS segment');
    const segment = switched.rows[0]!.segment;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const state = await client.query<{ archived: string | null; failed: string | null }>(
        'SELECT last_archived_wal AS archived, last_failed_wal AS failed FROM pg_stat_archiver',
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
