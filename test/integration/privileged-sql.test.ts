/**
 * A tenant who holds only its own PostgreSQL add-on's credentials plants what would hijack a
 * superuser session in its database (functions and operators shadowing the built-in ones in its
 * own schema, and a database-level search_path that puts that schema first), then every path on
 * which slipway runs SQL as the cluster's superuser is driven through the CLI: a backup (restore
 * point and row counts), its restore test, the download (pg_dump), restores into a new add-on and
 * in place (pg_restore), the size watch, provisioning and deletion. After each, no role gained any
 * right and no planted code ran.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { cliJson as cliJsonOf, postgresUriOf, restoreTested, sql } from '../support/addon-cli.js';

let daemon: TestDaemon;
let uri: string;
let tenantRole: string;
const scratch = mkdtempSync(join(tmpdir(), 'slipway-privileged-sql-'));

const cliJson = <T>(args: string[]) => cliJsonOf<T>(daemon, args);
const uriOf = (addon: string) => postgresUriOf(daemon, addon);

/**
 * What the tenant plants. `trip()` tries to make the tenant a superuser and to grant it
 * pg_execute_server_program (both fail unless a superuser runs it) and records who called it
 * (fails harmlessly where nothing can be written). Every shadow does the built-in's job too, so a
 * hijacked path would go on working and only the trip would tell.
 */
function plants(role: string, database: string): string[] {
  const r = pg.escapeIdentifier(role);
  const trip = `CREATE FUNCTION public.trip() RETURNS boolean LANGUAGE plpgsql AS $f$
    BEGIN
      BEGIN INSERT INTO public.tripped (by_role) VALUES (session_user::text); EXCEPTION WHEN others THEN NULL; END;
      BEGIN EXECUTE 'ALTER ROLE ${r.replace(/'/g, "''")} SUPERUSER CREATEROLE BYPASSRLS'; EXCEPTION WHEN others THEN NULL; END;
      BEGIN EXECUTE 'GRANT pg_execute_server_program, pg_read_server_files TO ${r.replace(/'/g, "''")}'; EXCEPTION WHEN others THEN NULL; END;
      RETURN true;
    END $f$`;
  const shadow = (signature: string, returns: string, body: string) =>
    `CREATE FUNCTION public.${signature} RETURNS ${returns} LANGUAGE plpgsql AS $f$ BEGIN PERFORM public.trip(); ${body} END $f$`;
  const operator = (op: string, type: string, fn: string, builtin: string) => [
    `CREATE FUNCTION public.${fn}(a ${type}, b ${type}) RETURNS boolean LANGUAGE plpgsql AS $f$ BEGIN PERFORM public.trip(); RETURN a OPERATOR(pg_catalog.${builtin}) b; END $f$`,
    `CREATE OPERATOR public.${op} (LEFTARG = ${type}, RIGHTARG = ${type}, FUNCTION = public.${fn})`,
  ];
  return [
    'CREATE TABLE public.tripped (by_role text NOT NULL)',
    'CREATE TABLE public.notes (id serial PRIMARY KEY, v text NOT NULL)',
    `INSERT INTO public.notes (v) VALUES ('one'), ('two'), ('three')`,
    trip,
    shadow('pg_create_restore_point(text)', 'pg_lsn', 'RETURN pg_catalog.pg_create_restore_point($1);'),
    shadow('pg_terminate_backend(integer)', 'boolean', 'RETURN pg_catalog.pg_terminate_backend($1);'),
    shadow('pg_backend_pid()', 'integer', 'RETURN pg_catalog.pg_backend_pid();'),
    shadow('pg_walfile_name(pg_lsn)', 'text', 'RETURN pg_catalog.pg_walfile_name($1);'),
    shadow('pg_switch_wal()', 'pg_lsn', 'RETURN pg_catalog.pg_switch_wal();'),
    shadow('pg_current_wal_lsn()', 'pg_lsn', 'RETURN pg_catalog.pg_current_wal_lsn();'),
    shadow('pg_is_in_recovery()', 'boolean', 'RETURN pg_catalog.pg_is_in_recovery();'),
    shadow('current_setting(text)', 'text', 'RETURN pg_catalog.current_setting($1);'),
    shadow('pg_database_size(oid)', 'bigint', 'RETURN pg_catalog.pg_database_size($1);'),
    shadow('set_config(text, text, boolean)', 'text', 'RETURN pg_catalog.set_config($1, $2, $3);'),
    `CREATE FUNCTION public.tripping_count_step(bigint) RETURNS bigint LANGUAGE plpgsql AS $f$ BEGIN PERFORM public.trip(); RETURN $1 + 1; END $f$`,
    `CREATE AGGREGATE public.count(*) (SFUNC = public.tripping_count_step, STYPE = bigint, INITCOND = '0')`,
    ...operator('=', 'name', 'tripping_name_eq', '='),
    ...operator('<>', 'name', 'tripping_name_ne', '<>'),
    ...operator('=', '"char"', 'tripping_char_eq', '='),
    ...operator('=', 'oid', 'tripping_oid_eq', '='),
    ...operator('=', 'text', 'tripping_text_eq', '='),
    ...operator('<>', 'integer', 'tripping_int_ne', '<>'),
    `ALTER DATABASE ${pg.escapeIdentifier(database)} SET search_path = public, pg_catalog`,
  ];
}

/** Every role's rights and memberships, as the cluster's catalogue has them. */
async function rights(url: string): Promise<string> {
  const roles = await sql<{ line: string }>(
    url,
    `SELECT pg_catalog.concat_ws(' ', rolname, rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls, rolinherit) AS line
       FROM pg_catalog.pg_roles ORDER BY rolname`,
  );
  const members = await sql<{ line: string }>(
    url,
    `SELECT pg_catalog.concat_ws(' ', r.rolname, 'in', g.rolname) AS line
       FROM pg_catalog.pg_auth_members m
       JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) m.member
       JOIN pg_catalog.pg_roles g ON g.oid OPERATOR(pg_catalog.=) m.roleid ORDER BY 1`,
  );
  // Roles of add-ons made or deleted by the test itself come and go; every other one stays put.
  return [...roles, ...members]
    .map((row) => row.line)
    .filter((line) => !line.split(' ').some((word) => addedRoles.has(word)))
    .join('\n');
}

const addedRoles = new Set<string>();

async function roleOf(addon: string): Promise<string> {
  return decodeURIComponent(new URL(await uriOf(addon)).username);
}

async function tripped(url: string): Promise<string[]> {
  return (await sql<{ by_role: string }>(url, 'SELECT by_role FROM public.tripped')).map((row) => row.by_role);
}

let rightsBefore: string;

/** No role gained a right or a membership, the tenant is no superuser, and no planted code ran. */
async function assertNothingGained(path: string, url = uri): Promise<void> {
  assert.equal(await rights(url), rightsBefore, `${path}: the roles' rights and memberships are unchanged`);
  const su = await sql<{ su: boolean }>(
    url,
    'SELECT rolsuper AS su FROM pg_catalog.pg_roles WHERE rolname OPERATOR(pg_catalog.=) current_user',
  );
  assert.equal(su[0]?.su, false, `${path}: the tenant is no superuser`);
  assert.deepEqual(await tripped(url), [], `${path}: nothing ran the tenant's planted functions or operators`);
}

before(async () => {
  process.env.SLIPWAY_ADDON_SIZE_CHECK_SECONDS = '1';
  daemon = await startDaemon([]);
  delete process.env.SLIPWAY_ADDON_SIZE_CHECK_SECONDS;
  await cliJson(['addon', 'create', 'postgresql', 'db']);
  uri = await uriOf('db');
  const url = new URL(uri);
  tenantRole = decodeURIComponent(url.username);
  const database = url.pathname.slice(1);
  for (const statement of plants(tenantRole, database)) await sql(uri, statement);
  // The plants work: the tenant's own session (which reads the new database setting) goes through them.
  assert.deepEqual(await sql(uri, `SELECT 1 AS one WHERE 'a'::text = 'a'::text`), [{ one: 1 }]);
  assert.deepEqual(await tripped(uri), [tenantRole], 'the planted operator runs in the tenant own sessions');
  await sql(uri, 'DELETE FROM public.tripped');
  rightsBefore = await rights(uri);
});

after(async () => {
  if (daemon) {
    await daemon.stop();
    rmSync(`${daemon.dataDir}-backups`, { recursive: true, force: true });
  }
  rmSync(scratch, { recursive: true, force: true });
});

let backupId: string;

test('a backup, its restore point and row counts, and its restore test run none of the tenant code', async () => {
  const taken = await daemon.cli(['addon', 'backup', 'db'], { timeoutMs: 600_000 });
  assert.equal(taken.code, 0, taken.stderr);
  backupId = taken.stdout.trim();
  const backup = await restoreTested(daemon, 'db', backupId);
  assert.equal(backup.verification, 'verified', backup.verification_detail);
  assert.match(backup.verification_detail, /2 tables, 3 rows as counted/);
  await assertNothingGained('backup and restore test');
});

test('a download (pg_dump of a restored copy) runs none of the tenant code', async () => {
  const file = join(scratch, 'db.dump');
  const result = await daemon.cli(['addon', 'backup', 'download', 'db', backupId, '--output', file], { timeoutMs: 600_000 });
  assert.equal(result.code, 0, result.stderr);
  await assertNothingGained('download');
});

test('a restore into a new add-on loads as that add-on own role, not as a superuser', async () => {
  await cliJson(['addon', 'restore', 'db', '--backup', backupId, '--as', 'db-copy']);
  const copyUri = await uriOf('db-copy');
  assert.deepEqual(
    (await sql<{ v: string }>(copyUri, 'SELECT v FROM public.notes ORDER BY id')).map((r) => r.v),
    ['one', 'two', 'three'],
  );
  const owners = await sql<{ owner: string }>(
    copyUri,
    `SELECT DISTINCT pg_catalog.pg_get_userbyid(relowner) AS owner FROM pg_catalog.pg_class c
      JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace WHERE n.nspname OPERATOR(pg_catalog.=) 'public'`,
  );
  assert.deepEqual(
    owners.map((o) => o.owner),
    [decodeURIComponent(new URL(copyUri).username)],
    'every restored object belongs to the new add-on role',
  );
  addedRoles.add(await roleOf('db-copy'));
  assert.deepEqual(await tripped(copyUri), []);
  await assertNothingGained('restore --as');
});

test('a restore in place runs none of the tenant code and keeps its planted setting its own', async () => {
  const result = await cliJson<{ safety_backup: string }>(['addon', 'restore', 'db', '--backup', backupId, '--yes']);
  assert.match(result.safety_backup, /^backup_/);
  await assertNothingGained('restore in place');
});

test('the size watch, provisioning and deletion run none of the tenant code', async () => {
  // The watch checks every second in this daemon: give it a few rounds over the planted database.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  await cliJson(['addon', 'create', 'postgresql', 'db-other']);
  addedRoles.add(await roleOf('db-other'));
  const removed = await daemon.cli(['addon', 'delete', 'db-copy', '--yes']);
  assert.equal(removed.code, 0, removed.stderr);
  await assertNothingGained('size watch, provisioning and deletion');
});
