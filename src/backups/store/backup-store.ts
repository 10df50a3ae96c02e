import type { Readable } from 'node:stream';
import { FixableError } from '../../core/errors.js';

/**
 * Where backups go: a folder (by default beside the data folder) or an S3-compatible object
 * store. Keys are relative, '/'-separated paths that slipway makes itself (for example
 * `postgresql/wal/000000010000000000000003`); a store refuses any other shape.
 *
 * Objects are written whole: a reader never sees half an object, and a write that failed
 * leaves nothing under its key.
 */
export interface BackupStore {
  /** Stores the stream under `key`, replacing what was there; resolves once it is durable. */
  put(key: string, body: Readable): Promise<{ sizeBytes: number }>;
  /** The object's bytes; rejects with BackupObjectMissing when there is none. */
  get(key: string): Promise<Readable>;
  /** Objects whose key starts with `prefix`, sorted by key. */
  list(prefix: string): Promise<StoredObject[]>;
  /** Removes the object; one already gone is not an error. */
  delete(key: string): Promise<void>;
  /** Where the backups go, for logs and `slipway system status`, without any secret. */
  describe(): string;
  /** Releases what the store holds open (an S3 client's connections); it is not used after. */
  close?(): void;
}

export interface StoredObject {
  key: string;
  sizeBytes: number;
  modifiedAt: Date;
}

export class BackupObjectMissing extends Error {
  constructor(readonly key: string) {
    super(`No backup object "${key}" in the backup store.`);
    this.name = 'BackupObjectMissing';
  }
}

const KEY = /^[a-z0-9][a-z0-9._-]*(\/[a-z0-9][a-z0-9._-]*)*$/i;

/** Refuses keys slipway would not make: absolute, empty parts, `..`, odd characters. */
export function assertBackupKey(key: string): void {
  if (!KEY.test(key) || key.split('/').some((part) => part === '..' || part === '.')) {
    throw new Error(`"${key}" is not a backup object key (relative, '/'-separated letters, digits, '.', '_' and '-').`);
  }
}

const PREFIX = /^[a-z0-9._/-]*$/i;

/** Refuses list prefixes no key could start with: absolute, `..` or `.` parts, odd characters. A prefix may end inside a part. */
export function assertBackupPrefix(prefix: string): void {
  if (!PREFIX.test(prefix) || prefix.startsWith('/') || prefix.split('/').some((part) => part === '..' || part === '.')) {
    throw new BackupStoreError(
      `"${prefix}" is not a backup key prefix.`,
      'A prefix is the start of a key, such as postgresql/ or postgresql/wal/0000.',
    );
  }
}

/**
 * A backup store that cannot be used as configured, or that failed in a way the operator can fix
 * (a bucket missing, credentials refused, a folder that is a symbolic link): the message says what
 * happened, the hint what to do. It never carries a secret.
 */
export class BackupStoreError extends FixableError {}

/**
 * An object the store holds but that cannot be read back as it was written: cut short, altered,
 * or written with another encryption key. A restore must not go on with it.
 */
export class BackupObjectDamaged extends FixableError {
  constructor(
    readonly key: string,
    message: string,
    hint?: string,
  ) {
    super(message, hint);
  }
}
