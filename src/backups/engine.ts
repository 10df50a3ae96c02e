import type { Readable } from 'node:stream';
import type { AddonBackupRow } from '../store/addon-backups.js';

/** One add-on as an engine sees it: its id, its name for messages and its stored configuration (credentials, port...). */
export interface EngineAddon {
  id: string;
  name: string;
  config: Record<string, string>;
}

/** What a new add-on made by a restore `--as` takes from its source. */
export interface NewAddonOptions {
  plan?: string;
  exclusive?: boolean;
}

/** What an engine stored for one add-on. */
export interface TakenBackup {
  objectKey: string;
  /** PostgreSQL: the named restore point the counts were taken at; an FS bucket: `sha256:<hex>` of its image. */
  restorePoint: string | null;
  /** What the verification compares: rows per table, {keys: n}, a bucket image's size. */
  counts: Record<string, number>;
  sizeBytes: number;
  createdAt: Date;
  finishedAt: Date;
}

/** Where a restore goes back to: a backup, or (engines that restore to any second) a time after `backup` ended. */
export interface RestoreFrom {
  backup: AddonBackupRow;
  time?: Date;
}

/**
 * One kind of add-on's backups (PostgreSQL, Redis) behind AddonBackups, which keeps the rows,
 * the queue, the schedule and retention: an engine takes, restore-tests, restores and
 * downloads; it knows its server and its objects in the backup store.
 */
export interface BackupEngine {
  /** The kind, in messages: "PostgreSQL". */
  readonly label: string;
  /** Object keys of this engine start so (`redis/`); retention hands it those still kept. */
  readonly objectPrefix: string;
  /** Restores to any second of a window (PostgreSQL), or to a backup only (Redis). */
  readonly toAnySecond: boolean;
  /** One backup serves all add-ons taken together (a PostgreSQL base backup), or each gets its own. */
  readonly takesTogether: boolean;
  /** The download's file name ends so: `dump`, `rdb`. */
  readonly dumpExtension: string;
  /** What linked apps see while a restore in place runs, for their log: "its connections end meanwhile". */
  readonly duringRestore: string;
  take(items: Array<{ addon: EngineAddon; backupId: string }>): Promise<TakenBackup[]>;
  /** Restores the backup into a throw-away copy and checks it; resolves with a one-line account, rejects saying what is wrong. */
  verify(backup: AddonBackupRow, addon: EngineAddon): Promise<string>;
  /** Replaces the add-on's data, keeping its name and credentials; `safety` was taken just before. */
  restoreInPlace(from: RestoreFrom, addon: EngineAddon, safety: AddonBackupRow): Promise<void>;
  /** Loads the data into another (new, empty) add-on of the same kind. */
  restoreInto(from: RestoreFrom, source: EngineAddon, into: EngineAddon): Promise<void>;
  /**
   * Copies the add-on as it is now into another (new, empty) add-on of the same kind, without a
   * backup in between. An engine without it forks by a fresh backup and a restore of it.
   */
  fork?(source: EngineAddon, into: EngineAddon): Promise<boolean>;
  /** How a restore `--as` creates the new add-on (an FS bucket: the source's size, exclusive or not); absent: the defaults. */
  newAddonOptions?(source: EngineAddon): NewAddonOptions;
  /** A portable dump of the add-on as the backup holds it. */
  download(backup: AddonBackupRow, addon: EngineAddon, use: (dump: Readable) => Promise<void>): Promise<void>;
  /** Removes an object no backup row uses any more. */
  deleteObject(key: string): Promise<void>;
  /** After retention: the objects of this engine still kept (PostgreSQL drops the WAL none needs). */
  pruned?(keptKeys: string[]): Promise<void>;
}

/**
 * A restore that failed after it changed the add-on's data: its message says what the add-on
 * holds now, its hint what to do.
 */
export class RestoreLeftChanges extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
    this.name = 'RestoreLeftChanges';
  }
}
