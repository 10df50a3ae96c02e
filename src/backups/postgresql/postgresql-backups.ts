import { randomBytes } from 'node:crypto';
import { runCaptured } from '../../executor/run-captured.js';
import { dirname, join } from 'node:path';
import { readFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import pg from 'pg';
import type { EmbeddedCluster } from '../../addons/postgresql/embedded-cluster.js';
import { findPostgresBinaries } from '../../addons/postgresql/binaries.js';
import { assertAddonIdentifier, createDatabaseSql } from '../../addons/postgresql/provisioning-sql.js';
import type { SystemUser } from '../../addons/system-user.js';
import { scramSha256Verifier } from '../../addons/postgresql/scram.js';
import { ADMIN_ROLE } from '../../addons/postgresql/cluster-config.js';
import { pinnedToolEnv } from '../../addons/postgresql/superuser-connection.js';
import type { BackupStore } from '../store/backup-store.js';
import { describeSumCheck, type ObjectSums } from '../object-sums.js';
import { asAdmin } from './admin-client.js';
import {
  streamBaseBackup,
  countRows,
  restorePointWithCounts,
  switchAndAwaitArchive,
  takeBaseBackup,
  type LiveCluster,
  type RowCounts,
} from './base-backup.js';
import { dumpDatabase, loadDump } from './dump-load.js';
import { ScratchCluster, type RecoveryTarget } from './scratch-cluster.js';
import { WAL_PREFIX, WalShipper } from './wal-shipper.js';

/** Base backups of the cluster shared by the add-ons of earlier versions. */
export const BASE_PREFIX = 'postgresql/base/';

/** Where one add-on server's objects go: `postgresql/<add-on id>/` (`base/…`, `wal/…`). */
export function serverPrefix(addonId: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(addonId)) throw new Error(`Add-on id "${addonId}" cannot name backup objects.`);
  return `postgresql/${addonId}/`;
}

/**
 * One PostgreSQL add-on as the backups see it: its database and role on the shared cluster, and
 * the role's password, with which a restore loads its data (never as a superuser).
 */
export interface PgAddon {
  database: string;
  role: string;
  password: string;
}

export interface TakenBackup {
  objectKey: string;
  restorePoint: string;
  counts: RowCounts;
  sizeBytes: number;
  createdAt: Date;
  finishedAt: Date;
}

export interface PostgresqlBackupsOptions {
  cluster: EmbeddedCluster;
  store: BackupStore;
  /**
   * Where its objects go: `postgresql/` for the shared cluster of earlier versions, or the
   * prefix of one add-on's own server (serverPrefix), whose restores are then physical: a
   * server started from the base backup and its WAL replaces the add-on's (no dump and reload).
   */
  prefix?: string;
  /** The objects' recorded sums: every object a copy is restored from is checked against them first. */
  sums: ObjectSums;
  /** Folder for throw-away restored copies (root's; emptied after each use). */
  scratchRoot: string;
  log(line: string): void;
}

/**
 * Backups of the embedded PostgreSQL cluster: WAL archived continuously (the cluster copies
 * each segment to its spool, WalShipper moves it to the store) and base backups of the whole
 * cluster; an add-on's backup is a base backup plus a named restore point in its database with
 * the row counts there. Every restore goes through a throw-away copy of the cluster
 * (ScratchCluster): the one database is dumped from it and loaded where it belongs.
 */
export class PostgresqlBackups {
  readonly shipper: WalShipper;

  constructor(private readonly o: PostgresqlBackupsOptions) {
    this.shipper = new WalShipper({ spoolDir: o.cluster.layout.walSpoolDir, store: o.store, prefix: this.walPrefix, log: o.log });
  }

  /** Whether this is one add-on's own server (physical restores) rather than the shared cluster. */
  get ownServer(): boolean {
    return this.o.prefix !== undefined && this.o.prefix !== 'postgresql/';
  }

  get basePrefix(): string {
    return `${this.o.prefix ?? 'postgresql/'}base/`;
  }

  get walPrefix(): string {
    return this.o.prefix ? `${this.o.prefix}wal/` : WAL_PREFIX;
  }

  /** The live server, as restores into it reach it. */
  liveTarget(): Promise<LiveCluster> {
    return this.live();
  }

  private async live(): Promise<LiveCluster> {
    const layout = this.o.cluster.layout;
    const binaries = await findPostgresBinaries(this.o.cluster.major);
    const password = (await readFile(layout.passwordFile, 'utf8')).trim();
    return { socketDir: layout.socketDir, port: this.o.cluster.port, password, binDir: dirname(binaries.postgres) };
  }

  /**
   * One base backup for all the add-ons given, then a restore point and row counts in each;
   * resolves once the WAL up to the last restore point is in the store.
   */
  async take(addons: Array<PgAddon & { pointName: string }>): Promise<TakenBackup[]> {
    const live = await this.live();
    const createdAt = new Date();
    const start = await this.currentSegment(live);
    const objectKey = `${this.basePrefix}${start}-${randomBytes(4).toString('hex')}.tar`;
    const { sizeBytes } = await takeBaseBackup(live, this.o.store, objectKey);
    const marked: Array<{ pointName: string; counts: RowCounts }> = [];
    for (const addon of addons) {
      assertAddonIdentifier(addon.database);
      marked.push({ pointName: addon.pointName, counts: (await restorePointWithCounts(live, addon.database, addon.pointName)).counts });
    }
    await switchAndAwaitArchive(live);
    await this.shipper.shipAll();
    const finishedAt = new Date();
    return marked.map((m) => ({ objectKey, restorePoint: m.pointName, counts: m.counts, sizeBytes, createdAt, finishedAt }));
  }

  /** Archives and ships the WAL written up to now, so a restore can reach this second. */
  async archiveNow(): Promise<void> {
    await switchAndAwaitArchive(await this.live());
    await this.shipper.shipAll();
  }

  /**
   * Restores a copy to the backup's restore point and checks it: the server starts, pg_amcheck
   * finds no corruption in the add-on's database, and each table has the rows counted at backup
   * time. Resolves with a one-line account; rejects saying what is wrong.
   */
  async verify(backup: { objectKey: string; restorePoint: string; counts: RowCounts }, database: string): Promise<string> {
    return this.withCopy(backup.objectKey, { name: backup.restorePoint }, async (copy, live, sums) => {
      const amcheck = await runAmcheck(live.binDir, copy.clientEnv(), database);
      const found = await asAdmin(copy, database, (client) => countRows(client, Object.keys(backup.counts))).catch((error: Error) => {
        throw new Error(`the restored copy cannot be counted: ${error.message}`);
      });
      const wrong = Object.entries(backup.counts).filter(([table, n]) => found[table] !== n);
      if (wrong.length > 0) {
        throw new Error(
          `row counts differ from the backup's: ${wrong.map(([t, n]) => `${t} has ${found[t]} rows, ${n} were counted`).join('; ')}`,
        );
      }
      const tables = Object.keys(backup.counts).length;
      const rows = Object.values(backup.counts).reduce((a, b) => a + b, 0);
      const counted = `${tables} table${tables === 1 ? '' : 's'}, ${rows} row${rows === 1 ? '' : 's'} as counted`;
      return `${sums}; ${copy.filesChecked}; restored and started; ${amcheck}; ${counted}`;
    });
  }

  /** pg_dump (custom format) of the add-on's database as it was at the target. */
  async dumpAt(baseKey: string, target: RecoveryTarget, database: string, use: (dump: Readable) => Promise<void>): Promise<void> {
    await this.withCopy(baseKey, target, async (copy, live) => {
      const run = dumpDatabase(live.binDir, copy.clientEnv(), database);
      await Promise.all([use(run.stdout), run.done]);
    });
  }

  /**
   * Replaces the add-on's database with its content at the target, keeping its name, owner and
   * credentials: the content is loaded into a new database first; only once it is whole are the
   * two swapped (the apps' connections end then). A failure leaves the current one untouched.
   */
  async restoreInPlace(baseKey: string, target: RecoveryTarget, addon: PgAddon, liveOfAddon?: LiveCluster): Promise<void> {
    if (this.ownServer) return this.replaceServerData(baseKey, target, this.o.cluster);
    // A backup of the shared cluster restores into the server the add-on has moved to since, if it has.
    const live = liveOfAddon ?? (await this.live());
    const incoming = `addon_${randomBytes(8).toString('hex')}`;
    await this.admin(live, async (c) => {
      for (const statement of createDatabaseSql(incoming, addon.role)) await c.query(statement);
    });
    try {
      await this.copyInto(baseKey, target, addon.database, { ...addon, database: incoming }, live);
      await this.swap(live, addon, incoming);
    } catch (error) {
      await this.admin(live, (c) => c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(incoming)} WITH (FORCE)`)).catch(
        () => undefined,
      );
      throw error;
    }
  }

  /**
   * Puts the database as it was at the target into another (new, empty) add-on. Into a server of
   * its own from one's own server: that server is replaced by the restored copy, whose database,
   * role and passwords are renamed and reset to the new add-on's first. Otherwise the database is
   * dumped from the copy and loaded into `intoLive`'s.
   */
  async restoreInto(
    baseKey: string,
    target: RecoveryTarget,
    source: PgAddon,
    into: PgAddon,
    intoServer?: { cluster: EmbeddedCluster; live: LiveCluster },
  ): Promise<void> {
    if (this.ownServer && intoServer) {
      const rename = async (copy: ScratchCluster) => {
        await asAdmin(copy, 'postgres', async (c) => {
          for (const statement of takeOverSql(source, into, intoServer.live.password)) await c.query(statement);
        });
      };
      return this.replaceServerData(baseKey, target, intoServer.cluster, rename);
    }
    await this.copyInto(baseKey, target, source.database, into, intoServer?.live);
  }

  /**
   * A fork of the server as it is now into another add-on's (new, empty) own server: a base
   * backup streamed from the live server with its WAL (no store in between) is started as a
   * throw-away copy as the receiver's account, takes the new add-on's names and passwords, and
   * replaces the receiver's data. The source only serves a base backup meanwhile.
   */
  async forkInto(source: PgAddon, into: PgAddon, intoServer: { cluster: EmbeddedCluster; live: LiveCluster }): Promise<void> {
    const live = await this.live();
    const user = await intoServer.cluster.serverAccount();
    let tool: ReturnType<typeof streamBaseBackup> | undefined;
    const copy = await ScratchCluster.restore({
      scratchRoot: this.o.scratchRoot,
      user,
      binDir: live.binDir,
      store: this.o.store,
      baseKey: '',
      baseStream: () => {
        tool = streamBaseBackup(live, 'fetch');
        return tool.stdout;
      },
      walNames: [],
      target: { immediate: true },
      adminPassword: live.password,
    }).catch(async (error: Error) => {
      await tool?.done.catch(() => undefined);
      throw error;
    });
    try {
      await tool?.done;
      await asAdmin(copy, 'postgres', async (c) => {
        for (const statement of takeOverSql(source, into, intoServer.live.password)) await c.query(statement);
      });
      await intoServer.cluster.replaceData((incoming) => copy.handOver(incoming));
    } finally {
      await copy.remove();
    }
  }

  /** A copy restored as the receiving server's account, adjusted, then put in place of its data. */
  private async replaceServerData(
    baseKey: string,
    target: RecoveryTarget,
    receiver: EmbeddedCluster,
    adjust?: (copy: ScratchCluster) => Promise<void>,
  ): Promise<void> {
    const user = await receiver.serverAccount();
    await this.withCopy(
      baseKey,
      target,
      async (copy) => {
        await adjust?.(copy);
        await receiver.replaceData((incoming) => copy.handOver(incoming));
      },
      user,
    );
  }

  private async copyInto(baseKey: string, target: RecoveryTarget, from: string, into: PgAddon, intoLive?: LiveCluster): Promise<void> {
    await this.withCopy(baseKey, target, async (copy, live) => {
      const run = dumpDatabase(live.binDir, copy.clientEnv(), from);
      await Promise.all([loadDump(intoLive ?? live, run.stdout, into), run.done]);
    });
  }

  private async swap(live: LiveCluster, addon: PgAddon, incoming: string): Promise<void> {
    const current = pg.escapeIdentifier(addon.database);
    const old = `addon_${randomBytes(8).toString('hex')}`;
    await this.admin(live, async (c) => {
      await c.query(`ALTER DATABASE ${current} WITH ALLOW_CONNECTIONS false`);
      await c.query(
        'SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity WHERE datname = $1 AND pid <> pg_catalog.pg_backend_pid()',
        [addon.database],
      );
      await c.query(`ALTER DATABASE ${current} RENAME TO ${pg.escapeIdentifier(old)}`);
      await c.query(`ALTER DATABASE ${pg.escapeIdentifier(incoming)} RENAME TO ${current}`);
      await c.query(`DROP DATABASE ${pg.escapeIdentifier(old)} WITH (FORCE)`);
    });
  }

  /**
   * Checks the base backup and the WAL after its start against their recorded sums, restores a
   * throw-away copy from them, hands it over (with the check's account), and removes it
   * whatever happens.
   */
  private async withCopy<T>(
    baseKey: string,
    target: RecoveryTarget,
    use: (copy: ScratchCluster, live: LiveCluster, sums: string) => Promise<T>,
    asUser?: SystemUser,
  ): Promise<T> {
    const live = await this.live();
    // A copy of one add-on's server runs as that add-on's account (or the receiving add-on's).
    const user = asUser ?? (await this.o.cluster.serverAccount());
    if (!baseKey.startsWith(this.basePrefix)) throw new Error(`${baseKey} is not a base backup of this server.`);
    const start = baseKey.slice(this.basePrefix.length, this.basePrefix.length + 24);
    const walPrefix = this.walPrefix;
    const walNames = (await this.o.store.list(walPrefix))
      .map((object) => object.key.slice(walPrefix.length))
      .filter((name) => name.endsWith('.history') || name.slice(0, 24) >= start);
    // Every object is checked as the copy reads it, and the copy starts only once all matched.
    const round = this.o.sums.round(`The restore from ${baseKey}`);
    const copy = await ScratchCluster.restore({
      checkObject: (key, body) => round.wrap(key, body),
      scratchRoot: this.o.scratchRoot,
      user,
      binDir: live.binDir,
      store: this.o.store,
      baseKey,
      walNames,
      walPrefix,
      target,
      adminPassword: live.password,
    });
    try {
      return await use(copy, live, describeSumCheck(round.result()));
    } finally {
      await copy.remove();
    }
  }

  private async currentSegment(live: LiveCluster): Promise<string> {
    return this.admin(
      live,
      async (c) => (await c.query<{ s: string }>('SELECT pg_catalog.pg_walfile_name(pg_catalog.pg_current_wal_lsn()) AS s')).rows[0]!.s,
    );
  }

  private admin<T>(live: LiveCluster, use: (client: pg.Client) => Promise<T>): Promise<T> {
    return asAdmin(live, 'postgres', use);
  }

  async deleteBase(key: string): Promise<void> {
    if (!key.startsWith(this.basePrefix)) throw new Error(`${key} is not a PostgreSQL base backup.`);
    await this.o.store.delete(key);
  }

  /** WAL objects no kept base backup needs any more (older than the oldest base's start). */
  async pruneWal(keptBaseKeys: string[]): Promise<number> {
    const base = this.basePrefix;
    const starts = keptBaseKeys
      .filter((key) => key.startsWith(base))
      .map((key) => key.slice(base.length, base.length + 24))
      .sort();
    // Without any base backup no restore can use the archive: all of it goes (not timeline files).
    const oldest = starts[0] ?? 'Z';
    let removed = 0;
    const walPrefix = this.walPrefix;
    for (const object of await this.o.store.list(walPrefix)) {
      const name = object.key.slice(walPrefix.length);
      if (!name.endsWith('.history') && name.slice(0, 24) < oldest) {
        await this.o.store.delete(object.key);
        removed++;
      }
    }
    return removed;
  }
}

/**
 * In a copy that becomes another add-on's server: the source's database and role take the new
 * add-on's names, the role its password, and slipway's superuser the receiving server's password.
 * Names are slipway's own identifiers; passwords reach the server as SCRAM verifiers only.
 */
export function takeOverSql(source: PgAddon, into: PgAddon, adminPassword: string): string[] {
  for (const name of [source.database, source.role, into.database, into.role]) assertAddonIdentifier(name);
  const statements: string[] = [];
  if (source.database !== into.database) {
    statements.push(`ALTER DATABASE ${pg.escapeIdentifier(source.database)} RENAME TO ${pg.escapeIdentifier(into.database)}`);
  }
  if (source.role !== into.role) {
    statements.push(`ALTER ROLE ${pg.escapeIdentifier(source.role)} RENAME TO ${pg.escapeIdentifier(into.role)}`);
  }
  statements.push(`ALTER ROLE ${pg.escapeIdentifier(into.role)} PASSWORD ${pg.escapeLiteral(scramSha256Verifier(into.password))}`);
  statements.push(`ALTER ROLE ${pg.escapeIdentifier(ADMIN_ROLE)} PASSWORD ${pg.escapeLiteral(scramSha256Verifier(adminPassword))}`);
  return statements;
}

async function runAmcheck(binDir: string, env: Record<string, string>, database: string): Promise<string> {
  const result = await runCaptured({
    // --install-missing puts amcheck into pg_catalog, where the tenant cannot have planted
    // anything; amcheck runs index expressions as the table's owner, not as the superuser.
    argv: [join(binDir, 'pg_amcheck'), '--no-password', '--install-missing', '--heapallindexed', '--database', database],
    cwd: '/',
    env: pinnedToolEnv(env),
  });
  if (result.exitCode === 0) return 'pg_amcheck found no corruption';
  const said = `${result.stdout}${result.stderr}`.trim().split('\n').slice(0, 3).join(' ');
  throw new Error(`pg_amcheck found corruption: ${said || `exit ${result.exitCode}`}`);
}
