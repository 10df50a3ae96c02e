import assert from 'node:assert/strict';
import pg from 'pg';
import type { TestDaemon } from './daemon.js';
import { waitUntil } from './wait.js';

/** Runs a CLI command with --format json, which must succeed, and returns what it printed. */
export async function cliJson<T>(daemon: TestDaemon, args: string[]): Promise<T> {
  const result = await daemon.cli([...args, '--format', 'json'], { timeoutMs: 600_000 });
  assert.equal(result.code, 0, `slipway ${args.join(' ')} failed:\n${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** The URI a linked app receives for a PostgreSQL add-on (`slipway addon env`). */
export async function postgresUriOf(daemon: TestDaemon, addon: string): Promise<string> {
  const env = await cliJson<Array<{ name: string; value: string }>>(daemon, ['addon', 'env', addon]);
  return env.find((v) => v.name === 'POSTGRESQL_ADDON_URI')!.value;
}

/** A connection of its own per call, with the credentials a linked app receives. */
export async function sql<T extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
  connectionTimeoutMillis = 5000,
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export interface ListedBackup {
  id: string;
  kind: string;
  created_at: string;
  size_bytes: number;
  verification: 'pending' | 'verified' | 'failed';
  verification_detail: string;
}

/** What every listed backup has; a test reading more of it (an engine's counts) names its own type. */
type BackupListing = Pick<ListedBackup, 'id' | 'verification' | 'verification_detail'>;

/** The add-on's backups as `slipway addon backups` lists them. */
export function backupsOf<T extends BackupListing = ListedBackup>(daemon: TestDaemon, addon: string): Promise<T[]> {
  return cliJson<T[]>(daemon, ['addon', 'backups', addon]);
}

/** Waits until the backup's restore test is over (verified or failed) and returns it. */
export function restoreTested<T extends BackupListing = ListedBackup>(
  daemon: TestDaemon,
  addon: string,
  id: string,
  timeoutMs = 300_000,
): Promise<T> {
  return waitUntil(
    `backup ${id} of ${addon} to be restore-tested`,
    async () => {
      const backup = (await backupsOf<T>(daemon, addon)).find((b) => b.id === id);
      return backup && backup.verification !== 'pending' ? backup : undefined;
    },
    timeoutMs,
  );
}
