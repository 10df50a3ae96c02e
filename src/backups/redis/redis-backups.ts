import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { ConflictError } from '../../core/errors.js';
import { RDB_FILE_NAME } from '../../addons/redis/redis-config.js';
import type { SystemUser } from '../../addons/system-user.js';
import type { AddonBackupRow } from '../../store/addon-backups.js';
import { type BackupEngine, type EngineAddon, type RestoreFrom, RestoreLeftChanges, type TakenBackup } from '../engine.js';
import type { BackupStore } from '../store/backup-store.js';
import { describeSumCheck, type ObjectSums } from '../object-sums.js';
import { copyKeys } from './copy-keys.js';
import { RedisConnection } from './resp-connection.js';
import { ScratchRedis } from './scratch-redis.js';
import { takeSnapshot } from './snapshot.js';

export const REDIS_PREFIX = 'redis/';

/** Where the snapshot of one backup goes in the backup store. */
export function snapshotKey(addonId: string, backupId: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(addonId) || !/^[A-Za-z0-9_]+$/.test(backupId)) {
    throw new Error(`"${addonId}"/"${backupId}" cannot name a snapshot.`);
  }
  return `${REDIS_PREFIX}${addonId}/${backupId}.rdb`;
}

/** What the backups need of the Redis add-ons' servers (RedisProvider). */
export interface RedisServers {
  /** The add-on's folder, where its server writes dump.rdb. */
  addonDir(id: string): string;
  /** redis-server. */
  readonly binary: string;
  /**
   * The account the add-on's own server runs as: it owns the dump.rdb a backup takes, and the
   * throw-away copies of the add-on's data run as it.
   */
  serverUserOf(id: string): Promise<SystemUser>;
  /** A control group with the add-on's plan limits for one throw-away copy, removed with it. */
  scratchGroup(id: string): { cgroupProcs: string[]; remove(): void };
}

export interface RedisBackupsOptions {
  servers: RedisServers;
  store: BackupStore;
  /** The objects' recorded sums: a snapshot is checked against its own before it is used. */
  sums: ObjectSums;
  /** Folder for throw-away servers (root's; emptied after each use). */
  scratchRoot: string;
  log(line: string): void;
}

/**
 * Backups of the Redis add-ons, one redis-server each: a backup is an RDB snapshot of the
 * add-on's server with the key count at the moment of its fork. Verifications and restores load
 * the snapshot into a throw-away redis-server with no network first (ScratchRedis), so a bad
 * snapshot fails before anything is touched; a restore then copies every key (DUMP/RESTORE,
 * expiries kept) into the live server, which keeps its port and password.
 */
export class RedisBackups implements BackupEngine {
  readonly label = 'Redis';
  readonly objectPrefix = REDIS_PREFIX;
  readonly toAnySecond = false;
  readonly takesTogether = false;
  readonly dumpExtension = 'rdb';
  readonly duringRestore = 'it is emptied and refilled meanwhile, so reads may miss keys until it is done';

  constructor(private readonly o: RedisBackupsOptions) {}

  /** A snapshot of each add-on, one after the other. */
  async take(items: Array<{ addon: EngineAddon; backupId: string }>): Promise<TakenBackup[]> {
    const taken: TakenBackup[] = [];
    for (const { addon, backupId } of items) {
      const user = await this.o.servers.serverUserOf(addon.id);
      const objectKey = snapshotKey(addon.id, backupId);
      const live = await this.live(addon);
      try {
        const rdbFile = join(this.o.servers.addonDir(addon.id), RDB_FILE_NAME);
        const snapshot = await takeSnapshot({ connection: live, rdbFile, uid: user.uid }, this.o.store, objectKey);
        taken.push({
          objectKey,
          restorePoint: null,
          counts: { keys: snapshot.keys },
          sizeBytes: snapshot.sizeBytes,
          createdAt: snapshot.createdAt,
          finishedAt: new Date(),
        });
      } finally {
        live.close();
      }
    }
    return taken;
  }

  /** The snapshot loads into a throw-away server and holds the keys counted when it was taken. */
  verify(backup: AddonBackupRow, addon: EngineAddon): Promise<string> {
    return this.withCopy(backup, addon, async (_copy, held, sums) => {
      const expired = held.expired > 0 ? ` (${held.expired} of them expired since, as their TTL said)` : '';
      return `${sums}; loaded by redis-server; ${plural(held.loaded + held.expired, 'key')} as counted${expired}`;
    });
  }

  /**
   * The add-on's server gets the snapshot's keys in place of its own, keeping its port and
   * password: the snapshot is loaded and checked in a throw-away server first; then the live one
   * is emptied (FLUSHALL) and every key copied. A failure after the emptying puts the safety
   * backup back the same way.
   */
  async restoreInPlace(from: RestoreFrom, addon: EngineAddon, safety: AddonBackupRow): Promise<void> {
    snapshotOnly(from);
    let emptied = false;
    try {
      await this.withCopy(from.backup, addon, async (copy) => {
        await this.copyInto(copy, addon, () => {
          emptied = true;
        });
      });
    } catch (error) {
      if (!emptied) throw error;
      throw await this.putBack(addon, safety, error as Error);
    }
  }

  /** Copies the snapshot's keys into another (new, empty) Redis add-on; the copy runs as the add-on it goes to. */
  async restoreInto(from: RestoreFrom, _source: EngineAddon, into: EngineAddon): Promise<void> {
    snapshotOnly(from);
    await this.withCopy(from.backup, into, (copy) => this.copyInto(copy, into));
  }

  /** The RDB file itself, as Redis wrote it (decrypted): redis-server loads it as its dump.rdb. Checked against its sum first. */
  async download(backup: AddonBackupRow, _addon: EngineAddon, use: (dump: Readable) => Promise<void>): Promise<void> {
    await this.o.sums.check([backup.object_key], `The download of backup ${backup.id}`);
    await use(await this.o.store.get(backup.object_key));
  }

  async deleteObject(key: string): Promise<void> {
    if (!key.startsWith(REDIS_PREFIX)) throw new Error(`${key} is not a Redis snapshot.`);
    await this.o.store.delete(key);
  }

  private async putBack(addon: EngineAddon, safety: AddonBackupRow, error: Error): Promise<RestoreLeftChanges> {
    try {
      await this.withCopy(safety, addon, (copy) => this.copyInto(copy, addon));
      this.o.log(
        `The restore of Redis add-on ${addon.name} failed midway (${error.message}); its safety backup ${safety.id} was put back.`,
      );
      return new RestoreLeftChanges(
        `${error.message}; the add-on's keys were put back from the safety backup ${safety.id} taken before`,
        'Its data is as it was when the restore began (writes made during the restore are lost).',
      );
    } catch (again) {
      this.o.log(
        `The restore of Redis add-on ${addon.name} failed midway and its safety backup could not be put back: ${(again as Error).message}`,
      );
      return new RestoreLeftChanges(
        `${error.message}; putting back the safety backup ${safety.id} failed too (${(again as Error).message}): the add-on holds part of the keys`,
        `Restore the safety backup: slipway addon restore ${addon.name} --backup ${safety.id} --yes`,
      );
    }
  }

  private async copyInto(copy: ScratchRedis, addon: EngineAddon, emptying?: () => void): Promise<void> {
    const live = await this.live(addon);
    const source = await copy.connect();
    try {
      emptying?.();
      await live.call('FLUSHALL');
      const copied = await copyKeys(source, live);
      this.o.log(`Copied ${plural(copied, 'key')} into Redis add-on ${addon.name} (${addon.id}).`);
    } finally {
      source.close();
      live.close();
    }
  }

  /**
   * Checks the backup's snapshot against its recorded sum, loads it into a throw-away server and
   * checks it holds the keys counted when it was taken (those loaded, and those whose TTL ran out
   * since), then hands it over (with the sum check's account); it is removed whatever happens.
   * The copy runs as `addon`'s server does: as its user, in a control group of its own with its
   * plan's limits, so a snapshot is only ever read with the rights of the add-on it belongs or
   * goes to.
   */
  private async withCopy<T>(
    backup: AddonBackupRow,
    addon: EngineAddon,
    use: (copy: ScratchRedis, held: { loaded: number; expired: number }, sums: string) => Promise<T>,
  ) {
    const counted = keysOf(backup);
    const sums = describeSumCheck(await this.o.sums.check([backup.object_key], `The restore from backup ${backup.id}`));
    const user = await this.o.servers.serverUserOf(addon.id);
    const snapshot = await this.o.store.get(backup.object_key);
    let group: ReturnType<RedisServers['scratchGroup']>;
    try {
      group = this.o.servers.scratchGroup(addon.id);
    } catch (error) {
      snapshot.destroy();
      throw error;
    }
    const copy = await ScratchRedis.load({ scratchRoot: this.o.scratchRoot, user, group, binary: this.o.servers.binary, snapshot });
    try {
      const held = await copy.loaded();
      if (held.loaded + held.expired !== counted) {
        throw new Error(
          `the snapshot holds ${plural(held.loaded + held.expired, 'key')}, ${counted} were counted when it was taken` +
            (held.expired > 0 ? ` (${held.expired} of those it holds expired since)` : ''),
        );
      }
      return await use(copy, held, sums);
    } finally {
      await copy.remove();
    }
  }

  /** The add-on's live server, authenticated, over the loopback address it always listens on. */
  private async live(addon: EngineAddon): Promise<RedisConnection> {
    const { port, password } = addon.config;
    if (!port || !password) throw new ConflictError(`The add-on ${addon.name} is still being created.`);
    const connection = await RedisConnection.open({ host: '127.0.0.1', port: Number(port) });
    try {
      await connection.call('AUTH', password);
    } catch (error) {
      connection.close();
      throw error;
    }
    return connection;
  }
}

function snapshotOnly(from: RestoreFrom): void {
  if (from.time) throw new Error('A Redis add-on restores to a snapshot, not to a second.');
}

function keysOf(backup: AddonBackupRow): number {
  const keys = (JSON.parse(backup.counts_json) as { keys?: unknown }).keys;
  if (typeof keys !== 'number') throw new Error(`backup ${backup.id} has no key count to compare with`);
  return keys;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
