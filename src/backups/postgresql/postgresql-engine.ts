import type { Readable } from 'node:stream';
import { ConflictError } from '../../core/errors.js';
import type { AddonBackupRow } from '../../store/addon-backups.js';
import type { BackupEngine, EngineAddon, RestoreFrom, TakenBackup } from '../engine.js';
import { BASE_PREFIX, type PgAddon, type PostgresqlBackups } from './postgresql-backups.js';
import type { RecoveryTarget } from './scratch-cluster.js';

/** The PostgreSQL backups as AddonBackups drives them: add-ons as their database and role, restores to a restore point or a time. */
export class PostgresqlEngine implements BackupEngine {
  readonly label = 'PostgreSQL';
  readonly objectPrefix = 'postgresql/';
  readonly toAnySecond = true;
  readonly takesTogether = true;
  readonly dumpExtension = 'dump';
  readonly duringRestore = 'its connections end meanwhile';

  constructor(readonly backups: PostgresqlBackups) {}

  take(items: Array<{ addon: EngineAddon; backupId: string }>): Promise<TakenBackup[]> {
    return this.backups.take(items.map(({ addon, backupId }) => ({ ...pgAddon(addon), pointName: `slipway_${backupId}` })));
  }

  verify(backup: AddonBackupRow, addon: EngineAddon): Promise<string> {
    if (!backup.restore_point) throw new Error('the backup has no restore point to restore to');
    return this.backups.verify(
      { objectKey: backup.object_key, restorePoint: backup.restore_point, counts: JSON.parse(backup.counts_json) },
      pgAddon(addon).database,
    );
  }

  restoreInPlace(from: RestoreFrom, addon: EngineAddon): Promise<void> {
    // The safety backup taken just before archived the WAL up to now.
    return this.backups.restoreInPlace(from.backup.object_key, target(from), pgAddon(addon));
  }

  async restoreInto(from: RestoreFrom, source: EngineAddon, into: EngineAddon): Promise<void> {
    if (from.time) await this.backups.archiveNow();
    await this.backups.restoreInto(from.backup.object_key, target(from), pgAddon(source), pgAddon(into));
  }

  download(backup: AddonBackupRow, addon: EngineAddon, use: (dump: Readable) => Promise<void>): Promise<void> {
    return this.backups.dumpAt(backup.object_key, target({ backup }), pgAddon(addon).database, use);
  }

  deleteObject(key: string): Promise<void> {
    return this.backups.deleteBase(key);
  }

  async pruned(keptKeys: string[]): Promise<void> {
    await this.backups.pruneWal(keptKeys.filter((key) => key.startsWith(BASE_PREFIX)));
  }
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
