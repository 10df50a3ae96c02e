import pg from 'pg';
import { scramSha256Verifier } from './scram.js';

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
