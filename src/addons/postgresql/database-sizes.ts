import pg from 'pg';
import { assertAddonIdentifier } from './provisioning-sql.js';

/**
 * The size of each add-on's database against its plan's (`databaseSizeBytes`). PostgreSQL has
 * no size quota of its own, so a check that runs every minute (add-ons/database-size-watch.ts)
 * makes a database over its size read-only: `default_transaction_read_only` for the database,
 * and its open sessions ended so they reconnect under it. Once it is below again (rows deleted
 * and vacuumed), the setting goes. What it stops is growth by an app that writes as usual; a
 * session that sets `default_transaction_read_only = off` itself still writes, until the next
 * check ends its session again (the check ends the sessions of a database that grew since).
 */

export interface DatabaseSize {
  database: string;
  sizeBytes: number;
  /** Whether the database is read-only by default now (after this check). */
  readOnly: boolean;
  /** What this check did: made it read-only, lifted that, or nothing. */
  change: 'made-read-only' | 'made-writable' | null;
}

/** One query: each database's size and whether it is read-only by default already. */
export const SIZES_SQL = `
SELECT d.datname AS database,
       pg_catalog.pg_database_size(d.oid)::pg_catalog.int8 AS size,
       COALESCE(s.setconfig @> ARRAY['default_transaction_read_only=on']::pg_catalog.text[], false) AS read_only
FROM pg_catalog.pg_database d
LEFT JOIN pg_catalog.pg_db_role_setting s ON s.setdatabase = d.oid AND s.setrole = 0
WHERE d.datname = ANY($1::pg_catalog.text[])`;

/** The statements that make a database read-only by default and end its sessions (idempotent). */
export function readOnlySql(database: string): string[] {
  assertAddonIdentifier(database);
  return [
    `ALTER DATABASE ${pg.escapeIdentifier(database)} SET default_transaction_read_only = on`,
    `SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity WHERE datname = ${pg.escapeLiteral(database)} AND pid <> pg_catalog.pg_backend_pid()`,
  ];
}

export function writableSql(database: string): string {
  assertAddonIdentifier(database);
  return `ALTER DATABASE ${pg.escapeIdentifier(database)} RESET default_transaction_read_only`;
}

/** What the check decides for one database, from what it read: pure, so it is tested alone. */
export function decide(
  row: { database: string; sizeBytes: number; readOnly: boolean },
  limitBytes: number,
  previousBytes: number | undefined,
): { action: 'make-read-only' | 'end-sessions' | 'make-writable' | null } {
  if (row.sizeBytes > limitBytes) {
    if (!row.readOnly) return { action: 'make-read-only' };
    // Still growing while read-only: a session turned it off for itself; end it again.
    if (previousBytes !== undefined && row.sizeBytes > previousBytes + 1024 * 1024) return { action: 'end-sessions' };
    return { action: null };
  }
  return { action: row.readOnly ? 'make-writable' : null };
}

/** Checks the databases given on one admin connection and applies what `decide` says. */
export async function enforceDatabaseSizes(
  client: pg.Client,
  databases: string[],
  limitBytes: number,
  previous: Map<string, number>,
): Promise<DatabaseSize[]> {
  for (const database of databases) assertAddonIdentifier(database);
  const { rows } = await client.query<{ database: string; size: string; read_only: boolean }>(SIZES_SQL, [databases]);
  const out: DatabaseSize[] = [];
  for (const row of rows) {
    const sizeBytes = Number(row.size);
    const { action } = decide({ database: row.database, sizeBytes, readOnly: row.read_only }, limitBytes, previous.get(row.database));
    previous.set(row.database, sizeBytes);
    if (action === 'make-read-only' || action === 'end-sessions') {
      for (const statement of readOnlySql(row.database)) await client.query(statement);
    } else if (action === 'make-writable') {
      await client.query(writableSql(row.database));
    }
    out.push({
      database: row.database,
      sizeBytes,
      readOnly: action === 'make-read-only' || action === 'end-sessions' || (row.read_only && action !== 'make-writable'),
      change: action === 'make-read-only' ? 'made-read-only' : action === 'make-writable' ? 'made-writable' : null,
    });
  }
  return out;
}
