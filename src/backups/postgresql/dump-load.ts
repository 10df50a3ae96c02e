import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { ADMIN_ROLE } from '../../addons/postgresql/cluster-config.js';
import { assertAddonIdentifier } from '../../addons/postgresql/provisioning-sql.js';
import type { LiveCluster } from './base-backup.js';
import { runStreamed, type StreamedRun } from '../../executor/run-streamed.js';

/** pg_dump's custom format of one database: what `pg_restore` loads anywhere. */
export function dumpDatabase(binDir: string, env: Record<string, string>, database: string): StreamedRun {
  return runStreamed({ argv: [join(binDir, 'pg_dump'), '--format=custom', '--no-password', '--dbname', database], env, name: 'pg_dump' });
}

/**
 * Loads a custom-format dump into a database of the live cluster, every object owned by `role`
 * (the add-on's own), with no other role's grants.
 */
export async function loadDump(cluster: LiveCluster, dump: Readable, database: string, role: string): Promise<void> {
  assertAddonIdentifier(database);
  assertAddonIdentifier(role);
  const tool = runStreamed({
    argv: [
      join(cluster.binDir, 'pg_restore'),
      '--no-password',
      '--no-owner',
      '--no-acl',
      '--role',
      role,
      '--exit-on-error',
      '--single-transaction',
      '--dbname',
      database,
    ],
    env: {
      PATH: '/usr/bin:/bin',
      PGHOST: cluster.socketDir,
      PGPORT: String(cluster.port),
      PGUSER: ADMIN_ROLE,
      PGPASSWORD: cluster.password,
    },
    stdin: dump,
    name: 'pg_restore',
  });
  tool.stdout.resume();
  await tool.done;
}
