import pg from 'pg';
import { scramSha256Verifier } from './scram.js';
import type { PostgresqlPlanLimits } from '../plan-limits.js';

/**
 * Statements for one add-on. CREATE ROLE / CREATE DATABASE take no bind parameters, so every
 * name goes through escapeIdentifier and every value through escapeLiteral; names are also
 * checked to be slipway's own `addon_<hex>` form before they get here.
 */

const SLIPWAY_IDENTIFIER = /^addon_[0-9a-f]{8,32}$/;

export function assertAddonIdentifier(name: string): void {
  if (!SLIPWAY_IDENTIFIER.test(name)) {
    throw new Error(`"${name}" is not a PostgreSQL add-on identifier slipway created (addon_<hex>); refusing to use it.`);
  }
}

export function createRoleSql(role: string, password: string): string {
  assertAddonIdentifier(role);
  return `CREATE ROLE ${pg.escapeIdentifier(role)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION PASSWORD ${pg.escapeLiteral(scramSha256Verifier(password))}`;
}

/** CREATE DATABASE cannot run inside a transaction block: run these one by one. */
export function createDatabaseSql(database: string, owner: string): string[] {
  assertAddonIdentifier(database);
  assertAddonIdentifier(owner);
  const db = pg.escapeIdentifier(database);
  return [
    `CREATE DATABASE ${db} OWNER ${pg.escapeIdentifier(owner)} ENCODING 'UTF8' TEMPLATE template0`,
    // Without this every role may connect to every database (PUBLIC has CONNECT and TEMP).
    `REVOKE ALL ON DATABASE ${db} FROM PUBLIC`,
    `GRANT ALL ON DATABASE ${db} TO ${pg.escapeIdentifier(owner)}`,
  ];
}

export function dropSql(database: string, role: string): string[] {
  assertAddonIdentifier(database);
  assertAddonIdentifier(role);
  return [
    // FORCE ends the app's open sessions, which would otherwise block the drop.
    `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`,
    `DROP ROLE IF EXISTS ${pg.escapeIdentifier(role)}`,
  ];
}

/**
 * The plan's limits on an add-on's role, idempotent (run at creation and at every start, so a
 * role from before the limits, or from a plan whose figures changed, gets them). statement_timeout
 * is the role's default: a session may change it (PostgreSQL lets every user); temp_file_limit
 * can only be set by a superuser, so the role cannot raise it, and is left out (`superuser`
 * false) on an external server whose admin is not one.
 */
export function roleLimitsSql(role: string, limits: PostgresqlPlanLimits, superuser: boolean): string[] {
  assertAddonIdentifier(role);
  const r = pg.escapeIdentifier(role);
  const statements = [
    `ALTER ROLE ${r} CONNECTION LIMIT ${whole(limits.connectionLimit)}`,
    `ALTER ROLE ${r} SET statement_timeout = ${whole(limits.statementTimeoutMs)}`,
  ];
  if (superuser) statements.push(`ALTER ROLE ${r} SET temp_file_limit = ${whole(limits.tempFileLimitKb)}`);
  return statements;
}

function whole(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`A role limit must be a whole number, not ${n}.`);
  return String(n);
}
