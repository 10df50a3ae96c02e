import { existsSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { ConflictError } from '../../core/errors.js';
import type { PostgresqlProvider } from '../../addons/postgresql/postgresql-provider.js';
import type { AddonBackupRow } from '../../store/addon-backups.js';
import type { ObjectSums } from '../object-sums.js';
import type { BackupStore } from '../store/backup-store.js';
import type { BackupEngine, EngineAddon, RestoreFrom, TakenBackup } from '../engine.js';
import { BASE_PREFIX, PostgresqlBackups, serverPrefix, type PgAddon } from './postgresql-backups.js';
import type { RecoveryTarget } from './scratch-cluster.js';

/** How often new add-on servers' WAL spools are picked up for shipping. */
const SHIPPERS_TICK_MS = 5_000;

export interface PostgresqlEngineOptions {
  provider: PostgresqlProvider;
  store: BackupStore;
  /** The objects' recorded sums, checked before a copy is restored from them. */
  sums: ObjectSums;
  scratchRoot: string;
  log(line: string): void;
}

/**
 * The PostgreSQL backups as AddonBackups drives them: each add-on with a server of its own has
 * its own base backups and WAL archive under `postgresql/<id>/` and restores physically; add-ons
 * still on the shared cluster of earlier versions share its base backups (`postgresql/base/`).
 * Restores go to a restore point or a time.
 */
export class PostgresqlEngine implements BackupEngine {
  readonly label = 'PostgreSQL';
  readonly objectPrefix = 'postgresql/';
  readonly toAnySecond = true;
  readonly takesTogether = true;
  readonly dumpExtension = 'dump';
  readonly duringRestore = 'its connections end meanwhile';
  /** The shared cluster's backups, while it runs. */
  private shared: PostgresqlBackups | undefined;
  private readonly own = new Map<string, PostgresqlBackups>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly o: PostgresqlEngineOptions) {}

  /** Ships every server's archived WAL to the store, picking up servers as they come and go. */
  async startShipping(): Promise<void> {
    if (this.timer) return;
    this.refreshShippers();
    this.timer = setInterval(() => this.refreshShippers(), SHIPPERS_TICK_MS);
    this.timer.unref();
  }

  stopShipping(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.shared?.shipper.stop();
    for (const backups of this.own.values()) backups.shipper.stop();
  }

  private refreshShippers(): void {
    void this.o.provider.sharedClusterRuns().then((runs) => {
      if (runs) this.sharedOrNone();
    });
    const current = new Map(this.o.provider.servers?.all() ?? []);
    for (const [id, backups] of this.own) {
      if (!current.has(id)) {
        backups.shipper.stop();
        this.own.delete(id);
      }
    }
    for (const [id] of current) if (this.timer) this.ofServer(id).shipper.start();
  }

  /**
   * The shared cluster's backups: its archive is shipped while it runs; once its add-ons moved
   * and it stopped, the backups taken on it still restore through throw-away copies.
   */
  private sharedOrNone(): PostgresqlBackups | undefined {
    const cluster = this.o.provider.cluster;
    if (!this.shared && cluster && existsSync(cluster.layout.passwordFile)) {
      this.shared = new PostgresqlBackups({
        cluster,
        store: this.o.store,
        sums: this.o.sums,
        scratchRoot: this.o.scratchRoot,
        log: this.o.log,
      });
      if (this.timer) void this.o.provider.sharedClusterRuns().then((runs) => runs && this.shared?.shipper.start());
    }
    return this.shared;
  }

  /** The backups of an add-on's own server (kept per add-on, its shipper started with the others). */
  private ofServer(id: string, config?: Record<string, string>): PostgresqlBackups {
    let backups = this.own.get(id);
    if (!backups) {
      const cluster = config ? this.o.provider.serverOfAddon(id, config) : this.o.provider.servers?.running(id);
      if (!cluster) throw new ConflictError(`The PostgreSQL server of add-on ${id} is not running.`);
      backups = new PostgresqlBackups({
        cluster,
        store: this.o.store,
        sums: this.o.sums,
        scratchRoot: this.o.scratchRoot,
        log: this.o.log,
        prefix: serverPrefix(id),
      });
      this.own.set(id, backups);
      if (this.timer) backups.shipper.start();
    }
    return backups;
  }

  private async sharedBackups(): Promise<PostgresqlBackups> {
    const shared = this.sharedOrNone();
    if (!shared) throw new ConflictError('No shared PostgreSQL cluster of earlier versions was ever here.');
    return shared;
  }

  /** The backups an add-on's objects live in: its own server's, or the shared cluster's. */
  private async backupsOf(addon: EngineAddon): Promise<PostgresqlBackups> {
    return addon.config.mode === 'dedicated' ? this.ofServer(addon.id, addon.config) : this.sharedBackups();
  }

  /** The backups a stored object belongs to, from its key. */
  private async backupsOfKey(key: string, addon: EngineAddon): Promise<PostgresqlBackups> {
    if (key.startsWith(BASE_PREFIX)) return this.sharedBackups();
    return this.backupsOf(addon);
  }

  async take(items: Array<{ addon: EngineAddon; backupId: string }>): Promise<TakenBackup[]> {
    const taken = new Map<string, TakenBackup>();
    const shared = items.filter(({ addon }) => addon.config.mode !== 'dedicated');
    if (shared.length > 0) {
      const results = await (await this.sharedBackups()).take(
        shared.map(({ addon, backupId }) => ({ ...pgAddon(addon), pointName: pointName(backupId) })),
      );
      shared.forEach(({ backupId }, i) => {
        taken.set(backupId, results[i]!);
      });
    }
    for (const { addon, backupId } of items.filter(({ addon }) => addon.config.mode === 'dedicated')) {
      const [result] = await this.ofServer(addon.id, addon.config).take([{ ...pgAddon(addon), pointName: pointName(backupId) }]);
      taken.set(backupId, result!);
    }
    return items.map(({ backupId }) => taken.get(backupId)!);
  }

  async verify(backup: AddonBackupRow, addon: EngineAddon): Promise<string> {
    if (!backup.restore_point) throw new Error('the backup has no restore point to restore to');
    return (await this.backupsOfKey(backup.object_key, addon)).verify(
      { objectKey: backup.object_key, restorePoint: backup.restore_point, counts: JSON.parse(backup.counts_json) },
      pgAddon(addon).database,
    );
  }

  async restoreInPlace(from: RestoreFrom, addon: EngineAddon): Promise<void> {
    // The safety backup taken just before archived the WAL up to now.
    const backups = await this.backupsOfKey(from.backup.object_key, addon);
    // An add-on moved to a server of its own since this backup of the shared cluster: it restores into that server.
    const moved =
      !backups.ownServer && addon.config.mode === 'dedicated' ? await this.ofServer(addon.id, addon.config).liveTarget() : undefined;
    await backups.restoreInPlace(from.backup.object_key, target(from), pgAddon(addon), moved);
  }

  async restoreInto(from: RestoreFrom, source: EngineAddon, into: EngineAddon): Promise<void> {
    const backups = await this.backupsOfKey(from.backup.object_key, source);
    // What was written up to now is archived first, on a server that still runs.
    if (from.time && (backups.ownServer || (await this.o.provider.sharedClusterRuns()))) await backups.archiveNow();
    const receiver = into.config.mode === 'dedicated' ? this.ofServer(into.id, into.config) : undefined;
    const intoServer = receiver
      ? { cluster: this.o.provider.serverOfAddon(into.id, into.config)!, live: await receiver.liveTarget() }
      : undefined;
    await backups.restoreInto(from.backup.object_key, target(from), pgAddon(source), pgAddon(into), intoServer);
  }

  /**
   * A fork between two servers of their own streams a base backup from the source straight into
   * the new add-on's server (resolves true); add-ons of the shared cluster fork the generic way
   * (resolves false: a fresh backup, restored).
   */
  async fork(source: EngineAddon, into: EngineAddon): Promise<boolean> {
    if (source.config.mode !== 'dedicated' || into.config.mode !== 'dedicated') return false;
    const receiver = this.ofServer(into.id, into.config);
    const intoServer = { cluster: this.o.provider.serverOfAddon(into.id, into.config)!, live: await receiver.liveTarget() };
    await this.ofServer(source.id, source.config).forkInto(pgAddon(source), pgAddon(into), intoServer);
    return true;
  }

  async download(backup: AddonBackupRow, addon: EngineAddon, use: (dump: Readable) => Promise<void>): Promise<void> {
    await (await this.backupsOfKey(backup.object_key, addon)).dumpAt(backup.object_key, target({ backup }), pgAddon(addon).database, use);
  }

  async deleteObject(key: string): Promise<void> {
    if (!/^postgresql\/(?:[A-Za-z0-9][A-Za-z0-9_-]{0,63}\/)?base\//.test(key)) throw new Error(`${key} is not a PostgreSQL base backup.`);
    await this.o.store.delete(key);
  }

  /**
   * After retention: each archive loses the WAL its oldest kept base backup does not need; the
   * archive of a server none of whose base backups is kept (an add-on deleted, or never backed
   * up) goes whole, as no restore could use it.
   */
  async pruned(keptKeys: string[]): Promise<void> {
    await this.sharedOrNone()?.pruneWal(keptKeys.filter((key) => key.startsWith(BASE_PREFIX)));
    const servers = new Set<string>();
    for (const object of await this.o.store.list('postgresql/')) {
      const id = /^postgresql\/([A-Za-z0-9][A-Za-z0-9_-]{0,63})\/wal\//.exec(object.key)?.[1];
      if (id) servers.add(id);
    }
    for (const id of servers) {
      const kept = keptKeys.filter((key) => key.startsWith(`${serverPrefix(id)}base/`));
      await pruneServerWal(this.o.store, id, kept);
    }
  }
}

/** The WAL of one server's archive older than the oldest kept base backup's start; all of it without one. */
async function pruneServerWal(store: BackupStore, id: string, keptBaseKeys: string[]): Promise<void> {
  const base = `${serverPrefix(id)}base/`;
  const walPrefix = `${serverPrefix(id)}wal/`;
  const oldest = keptBaseKeys.map((key) => key.slice(base.length, base.length + 24)).sort()[0] ?? 'Z';
  for (const object of await store.list(walPrefix)) {
    const name = object.key.slice(walPrefix.length);
    if (oldest === 'Z' || (!name.endsWith('.history') && name.slice(0, 24) < oldest)) await store.delete(object.key);
  }
}

function pointName(backupId: string): string {
  return `slipway_${backupId}`;
}

function target(from: RestoreFrom): RecoveryTarget {
  if (from.time) return { time: from.time };
  if (!from.backup.restore_point) throw new Error(`Backup ${from.backup.id} has no restore point.`);
  return { name: from.backup.restore_point };
}

function pgAddon(addon: EngineAddon): PgAddon {
  const { database, role, password } = addon.config;
  if (!database || !role || !password) throw new ConflictError(`The add-on ${addon.name} is still being created.`);
  return { database, role, password };
}
