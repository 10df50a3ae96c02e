/**
 * Backups of a PostgreSQL add-on of about 1 GiB on a real daemon: the time `slipway addon
 * backup` takes until the backup is stored, the time from then until its restore test ends
 * (verified), and the time `slipway addon restore --backup <id> --as <new>` takes; the baseline
 * is `pg_dump -Fc` of the same database and `pg_restore` of that dump into a new add-on's
 * database (the options slipway's own load uses), in the same run.
 *
 *   node --import tsx bench/backups.ts [--size-mib 1024]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { startDaemon, type TestDaemon } from '../test/support/daemon.js';
import { freePort } from '../test/support/free-port.js';

const PG_BIN = '/usr/lib/postgresql/15/bin';
const HOUR_MS = 3_600_000;

export interface BackupsResult {
  sizeMib: number;
  databaseBytes: number;
  rows: number;
  loadSeconds: number;
  backup: { seconds: number; sizeBytes: number };
  verifySeconds: number;
  verificationDetail: string;
  restoreSeconds: number;
  /** `slipway addon restore db --as db-fork` alone: the add-on as it is now, into a new one. */
  forkSeconds: number;
  pgDump: { seconds: number; sizeBytes: number };
  pgRestoreSeconds: number;
  /** The machine's 1-minute load average every 5 s of the run (it is shared). */
  load: { mean: number; max: number };
}

interface Backup {
  id: string;
  size_bytes: number;
  verification: 'pending' | 'verified' | 'failed';
  verification_detail: string;
  verified_at: string | null;
}

async function cliJson<T>(daemon: TestDaemon, args: string[]): Promise<T> {
  const result = await daemon.cli([...args, '--format', 'json'], { timeoutMs: HOUR_MS });
  if (result.code !== 0) throw new Error(`slipway ${args.join(' ')} failed:\n${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

async function uriOf(daemon: TestDaemon, addon: string): Promise<string> {
  const env = await cliJson<Array<{ name: string; value: string }>>(daemon, ['addon', 'env', addon]);
  const uri = env.find((v) => v.name === 'POSTGRESQL_ADDON_URI')?.value;
  if (!uri) throw new Error(`add-on ${addon} has no POSTGRESQL_ADDON_URI`);
  return uri;
}

async function withClient<T>(uri: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: uri });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function databaseBytes(uri: string): Promise<number> {
  return withClient(uri, async (c) =>
    Number((await c.query<{ size: string }>('SELECT pg_database_size(current_database()) AS size')).rows[0]!.size),
  );
}

/**
 * Wide rows (about 500 bytes, below the size where PostgreSQL compresses a row) of hex digests,
 * which compress about as well as ordinary text, inserted until the table is ~85% of the target;
 * then an index on one of the digests takes it to about the target.
 */
async function loadData(uri: string, targetBytes: number): Promise<number> {
  const batch = Math.min(200_000, Math.max(10_000, Math.round(targetBytes / 600 / 8)));
  return withClient(uri, async (c) => {
    await c.query(
      'CREATE TABLE events (id bigint PRIMARY KEY, at timestamptz NOT NULL, amount numeric(12,2) NOT NULL, ref text NOT NULL, payload text NOT NULL)',
    );
    const payload = Array.from({ length: 13 }, (_, i) => `md5(g::text || '${i}')`).join(' || ');
    let rows = 0;
    for (;;) {
      await c.query(
        `INSERT INTO events SELECT g, timestamptz '2026-01-01' + g * interval '1 second', (g % 100000) / 100.0, md5(g::text), ${payload}
           FROM generate_series($1::bigint, $2::bigint) AS g`,
        [rows + 1, rows + batch],
      );
      rows += batch;
      const size = Number((await c.query<{ size: string }>('SELECT pg_database_size(current_database()) AS size')).rows[0]!.size);
      if (size >= targetBytes * 0.85) break;
    }
    await c.query('CREATE INDEX events_ref ON events (ref)');
    await c.query('ANALYZE events');
    return rows;
  });
}

function run(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${argv.join(' ')} exited ${code}:\n${stderr}`))));
  });
}

const secondsSince = (started: number) => (Date.now() - started) / 1000;

export async function benchBackups(options: { sizeMib?: number } = {}): Promise<BackupsResult> {
  const sizeMib = options.sizeMib ?? 1024;
  // No scheduled backup may run beside the measures: a new add-on is due for one at the next
  // minute's tick once the day's time is past, so the time is put at the end of the day.
  if (new Date().getHours() === 23) throw new Error('Run this bench outside 23:00-23:59 local time: the daily backups run at 23:59 here.');
  // A cluster port of its own, clear of a platform or a test daemon running beside the bench.
  const portBefore = process.env.SLIPWAY_POSTGRES_PORT;
  process.env.SLIPWAY_POSTGRES_PORT = String(await freePort());
  const restorePort = () => {
    if (portBefore === undefined) delete process.env.SLIPWAY_POSTGRES_PORT;
    else process.env.SLIPWAY_POSTGRES_PORT = portBefore;
    if (limitsBefore === undefined) delete process.env.SLIPWAY_ADDON_PLAN_LIMITS;
    else process.env.SLIPWAY_ADDON_PLAN_LIMITS = limitsBefore;
  };
  // The plan's data size (256 MiB by default) would make the add-on read-only half-way.
  const limitsBefore = process.env.SLIPWAY_ADDON_PLAN_LIMITS;
  process.env.SLIPWAY_ADDON_PLAN_LIMITS = JSON.stringify({ postgresql: { databaseSizeBytes: (sizeMib * 4 + 256) * 1024 * 1024 } });
  const daemon = await startDaemon(['--backup-at', '23:59']).catch((error: unknown) => {
    restorePort();
    throw error;
  });
  const scratch = mkdtempSync(join(tmpdir(), 'slipway-bench-backups-'));
  const loads = [loadavg()[0]!];
  const sampler = setInterval(() => loads.push(loadavg()[0]!), 5000);
  try {
    await cliJson(daemon, ['addon', 'create', 'postgresql', 'db']);
    const uri = await uriOf(daemon, 'db');
    let started = Date.now();
    const rows = await loadData(uri, sizeMib * 1024 * 1024);
    const loadSeconds = secondsSince(started);
    const size = await databaseBytes(uri);

    // slipway: the backup until stored, its restore test until verified, a restore into a new add-on.
    started = Date.now();
    const taken = await daemon.cli(['addon', 'backup', 'db'], { timeoutMs: HOUR_MS });
    if (taken.code !== 0) throw new Error(`slipway addon backup failed:\n${taken.stderr}`);
    const storedAt = Date.now();
    const backupSeconds = (storedAt - started) / 1000;
    const id = taken.stdout.trim();
    let backup: Backup | undefined;
    for (;;) {
      backup = (await cliJson<Backup[]>(daemon, ['addon', 'backups', 'db'])).find((b) => b.id === id);
      if (backup && backup.verification !== 'pending') break;
      await sleep(1000);
    }
    if (backup.verification !== 'verified') throw new Error(`backup ${id} failed its restore test: ${backup.verification_detail}`);
    // The daemon's own time of the end of the test (same clock), not the poll's.
    const verifySeconds = (Date.parse(backup.verified_at ?? new Date().toISOString()) - storedAt) / 1000;

    started = Date.now();
    await cliJson(daemon, ['addon', 'restore', 'db', '--backup', id, '--as', 'db-restored']);
    const restoreSeconds = secondsSince(started);
    const restoredRows = await withClient(await uriOf(daemon, 'db-restored'), async (c) =>
      Number((await c.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0]!.n),
    );
    if (restoredRows !== rows) throw new Error(`the restored add-on has ${restoredRows} rows, not ${rows}`);

    started = Date.now();
    await cliJson(daemon, ['addon', 'restore', 'db', '--as', 'db-fork']);
    const forkSeconds = secondsSince(started);
    const forkedRows = await withClient(await uriOf(daemon, 'db-fork'), async (c) =>
      Number((await c.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0]!.n),
    );
    if (forkedRows !== rows) throw new Error(`the fork has ${forkedRows} rows, not ${rows}`);

    // The baseline: pg_dump -Fc of the same database, pg_restore into a new add-on's (empty) database.
    const dumpFile = join(scratch, 'db.dump');
    started = Date.now();
    await run([join(PG_BIN, 'pg_dump'), '--format=custom', '--no-password', '--file', dumpFile, '--dbname', uri]);
    const pgDumpSeconds = secondsSince(started);
    await cliJson(daemon, ['addon', 'create', 'postgresql', 'db-baseline']);
    const baselineUri = await uriOf(daemon, 'db-baseline');
    started = Date.now();
    await run([
      join(PG_BIN, 'pg_restore'),
      '--no-password',
      '--no-owner',
      '--no-acl',
      '--exit-on-error',
      '--single-transaction',
      '--dbname',
      baselineUri,
      dumpFile,
    ]);
    const pgRestoreSeconds = secondsSince(started);

    return {
      sizeMib,
      databaseBytes: size,
      rows,
      loadSeconds,
      backup: { seconds: backupSeconds, sizeBytes: backup.size_bytes },
      verifySeconds,
      verificationDetail: backup.verification_detail,
      restoreSeconds,
      forkSeconds,
      pgDump: { seconds: pgDumpSeconds, sizeBytes: statSync(dumpFile).size },
      pgRestoreSeconds,
      load: { mean: loads.reduce((a, b) => a + b, 0) / loads.length, max: Math.max(...loads) },
    };
  } finally {
    clearInterval(sampler);
    await daemon.stop();
    restorePort();
    rmSync(`${daemon.dataDir}-backups`, { recursive: true, force: true });
    rmSync(daemon.dataDir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
}

export function describeBackups(r: BackupsResult): string {
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
  const s = (seconds: number) => `${seconds.toFixed(1)} s`;
  const dumpAndRestore = r.pgDump.seconds + r.pgRestoreSeconds;
  return [
    `backups of a PostgreSQL add-on of ${mib(r.databaseBytes)} (pg_database_size; ${r.rows} rows and an index, loaded in ${s(r.loadSeconds)}), ` +
      `machine load ${r.load.mean.toFixed(1)} on average, ${r.load.max.toFixed(1)} at most:`,
    `  slipway addon backup, until stored: ${s(r.backup.seconds)} (${mib(r.backup.sizeBytes)}, ${(r.backup.sizeBytes / r.databaseBytes).toFixed(2)}x the database), ` +
      `${(r.backup.seconds / r.pgDump.seconds).toFixed(2)}x pg_dump -Fc's ${s(r.pgDump.seconds)} (${mib(r.pgDump.sizeBytes)})`,
    `  its restore test, until verified: ${s(r.verifySeconds)}, ${(r.verifySeconds / dumpAndRestore).toFixed(2)}x pg_dump + pg_restore's ${s(dumpAndRestore)} ` +
      `(${r.verificationDetail})`,
    `  slipway addon restore --backup --as, into a new add-on: ${s(r.restoreSeconds)}, ` +
      `${(r.restoreSeconds / r.pgRestoreSeconds).toFixed(2)}x pg_restore's ${s(r.pgRestoreSeconds)}, ` +
      `${(r.restoreSeconds / dumpAndRestore).toFixed(2)}x pg_dump + pg_restore's`,
    `  slipway addon restore --as alone (a fork of the add-on as it is now): ${s(r.forkSeconds)}, ` +
      `${(r.forkSeconds / r.pgRestoreSeconds).toFixed(2)}x pg_restore's, ${(r.forkSeconds / dumpAndRestore).toFixed(2)}x pg_dump + pg_restore's`,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const { values } = parseArgs({ options: { 'size-mib': { type: 'string', default: '1024' } } });
  const sizeMib = Number(values['size-mib']);
  if (!Number.isInteger(sizeMib) || sizeMib < 1) throw new Error('--size-mib takes a whole number of MiB');
  const result = await benchBackups({ sizeMib });
  console.log(describeBackups(result));
  console.log(JSON.stringify(result));
}
