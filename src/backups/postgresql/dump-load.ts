import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pinnedToolEnv } from '../../addons/postgresql/superuser-connection.js';
import { assertAddonIdentifier } from '../../addons/postgresql/provisioning-sql.js';
import type { LiveCluster } from './base-backup.js';
import type { PgAddon } from './postgresql-backups.js';
import { runStreamed, type StreamedRun } from '../../executor/run-streamed.js';

/** pg_dump's custom format of one database: what `pg_restore` loads anywhere. */
export function dumpDatabase(binDir: string, env: Record<string, string>, database: string): StreamedRun {
  return runStreamed({
    argv: [join(binDir, 'pg_dump'), '--format=custom', '--no-password', '--dbname', database],
    env: pinnedToolEnv(env),
    name: 'pg_dump',
  });
}

/**
 * Loads a custom-format dump into an add-on's database of the live cluster as the add-on's own
 * role, logged in with its own password: what the dump holds runs with the tenant's rights and
 * no more (a superuser session that only `SET ROLE`d could be `RESET` by a function in the
 * dump). Every object is owned by that role, with no other role's grants.
 */
export async function loadDump(cluster: LiveCluster, dump: Readable, into: PgAddon): Promise<void> {
  assertAddonIdentifier(into.database);
  assertAddonIdentifier(into.role);
  const tool = runStreamed({
    argv: [
      join(cluster.binDir, 'pg_restore'),
      '--no-password',
      '--no-owner',
      '--no-acl',
      '--exit-on-error',
      '--single-transaction',
      '--dbname',
      into.database,
    ],
    env: {
      PATH: '/usr/bin:/bin',
      PGHOST: cluster.socketDir,
      PGPORT: String(cluster.port),
      PGUSER: into.role,
      PGPASSWORD: into.password,
    },
    stdin: dump,
    name: 'pg_restore',
  });
  tool.stdout.resume();
  await tool.done;
}
