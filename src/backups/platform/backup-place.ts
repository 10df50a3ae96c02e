import type { Readable } from 'node:stream';
import { summing } from '../object-sums.js';
import type { BackupStore, StoredObject } from '../store/backup-store.js';
import { completeBackups, isBackupName, MANIFEST_FILE } from './manifest.js';

/**
 * Where platform backups are kept: a backup store as it stores bytes (never the encrypting
 * wrapper: each backup seals its own files, bound to their paths inside it) and the prefix
 * they sit under. `system backup --to <folder>` writes into that folder (prefix ''); the
 * configured backup store (the add-ons' folder or S3 bucket) holds them under `platform/`.
 *
 * ```
 * <prefix>slipway-platform-<time>/manifest.json        written last: a backup with one is whole
 * <prefix>slipway-platform-<time>/<path>               its files (the store, bundles, add-ons' objects...)
 * <prefix>releases/<app id>/<deployment id>[-<key id>].tar   kept releases, shared by the backups naming them
 * ```
 */
export interface PlatformBackupPlace {
  /** The store as it keeps bytes (not encrypted by it). */
  raw: BackupStore;
  /** '' or a prefix ending in '/'. */
  prefix: string;
  /** The local folder holding the backups, when the place is one (a folder store), else undefined. */
  folder?: string;
  /** Where the backups go, for messages (no secret). */
  describe(): string;
}

/** The prefix platform backups have in the configured backup store, beside the add-ons' objects. */
export const STORE_PREFIX = 'platform/';

/** The complete backups of a place (those whose manifest was written), newest first. */
export async function completeBackupNames(place: PlatformBackupPlace): Promise<string[]> {
  const names = new Set<string>();
  for (const object of await place.raw.list(place.prefix)) {
    const [name, file, ...more] = object.key.slice(place.prefix.length).split('/');
    if (name && file === MANIFEST_FILE && more.length === 0 && isBackupName(name)) names.add(name);
  }
  return completeBackups([...names]);
}

/** Backups a crash left without their manifest (never whole): removed before the next is written. */
export async function incompleteBackupNames(place: PlatformBackupPlace): Promise<string[]> {
  const complete = new Set(await completeBackupNames(place));
  const names = new Set<string>();
  for (const object of await place.raw.list(place.prefix)) {
    const name = object.key.slice(place.prefix.length).split('/')[0]!;
    if (isBackupName(name) && !complete.has(name)) names.add(name);
  }
  return [...names];
}

/** Removes every object of one backup (not the releases it shares). */
export async function removeBackupObjects(place: PlatformBackupPlace, name: string): Promise<void> {
  // The manifest first: a backup half removed is no longer taken for a whole one.
  await place.raw.delete(`${place.prefix}${name}/${MANIFEST_FILE}`);
  for (const object of await place.raw.list(`${place.prefix}${name}/`)) await place.raw.delete(object.key);
}

/** Objects of the place under `sub` (relative to the prefix), with their keys relative to the prefix. */
export async function listUnder(place: PlatformBackupPlace, sub: string): Promise<StoredObject[]> {
  return (await place.raw.list(place.prefix + sub)).map((object) => ({ ...object, key: object.key.slice(place.prefix.length) }));
}

/**
 * A view of a store under a prefix that remembers the size and SHA-256 of every object put
 * through it, as the bytes reach the store (encrypted ones, when an encrypting store is put over
 * it): what the manifest lists and a restore checks.
 */
export class RecordingStore implements BackupStore {
  readonly written = new Map<string, { size_bytes: number; sha256: string }>();

  constructor(
    private readonly inner: BackupStore,
    private readonly prefix: string,
  ) {}

  describe(): string {
    return this.inner.describe();
  }

  async put(key: string, body: Readable): Promise<{ sizeBytes: number }> {
    const summed = summing(body);
    const stored = await this.inner.put(this.prefix + key, summed.stream);
    this.written.set(key, summed.sum());
    return stored;
  }

  get(key: string): Promise<Readable> {
    return this.inner.get(this.prefix + key);
  }

  async list(prefix: string): Promise<StoredObject[]> {
    return (await this.inner.list(this.prefix + prefix)).map((object) => ({ ...object, key: object.key.slice(this.prefix.length) }));
  }

  delete(key: string): Promise<void> {
    return this.inner.delete(this.prefix + key);
  }
}
