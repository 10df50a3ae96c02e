/**
 * Backups in a local folder: by default `<data-dir>-backups`, beside the data folder. The daemon
 * (root) owns it; it is created with mode 0700 when missing, and every folder made below it too.
 *
 * An object is a file at its key's path. A write goes to a temporary file in the same folder
 * (a name starting with '.', which no key can have, so list() never shows it), is fsynced, then
 * renamed over the key and the folder fsynced: a reader sees the old object or the new one,
 * never half of one, and a failed write leaves nothing under the key.
 *
 * Nothing below the root may be a symbolic link: each folder on the way to a key is checked with
 * lstat, the object itself opened with O_NOFOLLOW and checked with fstat, and the path checked to
 * stay inside the root. Only root can change the folder, so there is no attacker to race between
 * the check and the open; the checks catch a folder that was tampered with or mistaken for
 * another, before root reads or writes through a link. The root itself may be a link (an operator
 * pointing it to another disk): it is resolved once, when the store opens.
 */
import { constants, createReadStream, type Stats } from 'node:fs';
import { chmod, lstat, mkdir, open, readdir, realpath, rename, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { isAbsolute, join, sep } from 'node:path';
import type { Readable } from 'node:stream';
import {
  assertBackupKey,
  assertBackupPrefix,
  BackupObjectMissing,
  BackupStoreError,
  type BackupStore,
  type StoredObject,
} from './backup-store.js';

const OPEN_READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const OPEN_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NOCTTY;

export class FolderBackupStore implements BackupStore {
  private constructor(
    /** The folder as configured, for messages. */
    readonly folder: string,
    /** The folder with any link in its own path resolved. */
    private readonly root: string,
  ) {}

  /** Opens the folder, creating it (mode 0700) when missing. */
  static async open(folder: string): Promise<FolderBackupStore> {
    if (!isAbsolute(folder)) {
      throw new BackupStoreError(
        `The backup folder "${folder}" is not an absolute path.`,
        'Give the backup folder as an absolute path, such as /var/lib/slipway-backups.',
      );
    }
    await mkdir(folder, { recursive: true, mode: 0o700 }).catch((e: NodeJS.ErrnoException) => {
      throw new BackupStoreError(
        `Cannot create the backup folder ${folder}: ${e.code ?? e.message}.`,
        'Create it (mode 0700, owned by the user slipway runs as) or choose another backup folder.',
      );
    });
    const root = await realpath(folder);
    const stats = await lstat(root);
    if (!stats.isDirectory()) {
      throw new BackupStoreError(`The backup folder ${folder} is not a folder.`, 'Choose a folder, or a path where one can be created.');
    }
    const uid = process.getuid?.();
    if (uid !== undefined && stats.uid !== uid) {
      throw new BackupStoreError(
        `The backup folder ${folder} belongs to uid ${stats.uid}, not to the user slipway runs as (uid ${uid}).`,
        `Give it to that user (chown ${uid} ${folder}) or choose another backup folder.`,
      );
    }
    // Backups hold every app's data: only their owner reads them.
    if ((stats.mode & 0o077) !== 0) await chmod(root, 0o700);
    return new FolderBackupStore(folder, root);
  }

  describe(): string {
    return `the folder ${this.folder}`;
  }

  async put(key: string, body: Readable): Promise<{ sizeBytes: number }> {
    const { parent, name } = await this.locate(key, true);
    const temporary = join(parent, `.${randomBytes(8).toString('hex')}.partial`);
    const handle = await open(temporary, OPEN_NEW, 0o600);
    let sizeBytes = 0;
    try {
      for await (const chunk of body) {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
        await handle.write(bytes);
        sizeBytes += bytes.length;
      }
      await handle.sync();
      await handle.close();
      await this.refuseNonFolder(parent, key);
      await rename(temporary, join(parent, name));
    } catch (e) {
      await handle.close().catch(() => undefined);
      await unlink(temporary).catch(() => undefined);
      throw this.explain(e, key, 'write');
    }
    await syncFolder(parent);
    return { sizeBytes };
  }

  async get(key: string): Promise<Readable> {
    const { parent, name } = await this.locate(key, false);
    const path = join(parent, name);
    const handle = await open(path, OPEN_READ).catch((e: NodeJS.ErrnoException) => {
      throw e.code === 'ENOENT' ? new BackupObjectMissing(key) : this.explain(e, key, 'read');
    });
    const stats = await handle.stat().catch(async (e) => {
      await handle.close();
      throw e;
    });
    if (!stats.isFile()) {
      await handle.close();
      throw this.refusal(key, `is ${kindOf(stats)}, not a file`);
    }
    return createReadStream('', { fd: handle, autoClose: true });
  }

  async list(prefix: string): Promise<StoredObject[]> {
    assertBackupPrefix(prefix);
    // Walk from the deepest folder the prefix names in full; what is below it is filtered by name.
    const folderParts = prefix.split('/').slice(0, -1);
    for (const part of folderParts) if (part === '') return [];
    let start = this.root;
    for (const part of folderParts) {
      start = join(start, part);
      const stats = await lstat(start).catch((e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return undefined;
        throw e;
      });
      if (!stats?.isDirectory()) return [];
    }
    const found: StoredObject[] = [];
    await this.walk(start, folderParts.join('/'), prefix, found);
    return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async delete(key: string): Promise<void> {
    let located: { parent: string; name: string };
    try {
      located = await this.locate(key, false);
    } catch (e) {
      if (e instanceof BackupObjectMissing) return;
      throw e;
    }
    const path = join(located.parent, located.name);
    const stats = await lstat(path).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return undefined;
      throw this.explain(e, key, 'delete');
    });
    if (!stats) return;
    if (!stats.isFile()) throw this.refusal(key, kindOf(stats));
    await unlink(path).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw this.explain(e, key, 'delete');
    });
    await syncFolder(located.parent);
  }

  /**
   * The folder holding `key` and its last part, after checking every folder on the way is a real
   * folder inside the root. With `create`, missing folders are made (mode 0700); without, a
   * missing one means there is no such object.
   */
  private async locate(key: string, create: boolean): Promise<{ parent: string; name: string }> {
    assertBackupKey(key);
    const parts = key.split('/');
    const name = parts.pop()!;
    let parent = this.root;
    for (const part of parts) {
      parent = join(parent, part);
      if (!parent.startsWith(this.root + sep)) throw this.refusal(key, 'leaves the backup folder');
      let stats = await lstat(parent).catch((e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT') return undefined;
        throw this.explain(e, key, create ? 'write' : 'read');
      });
      if (!stats) {
        if (!create) throw new BackupObjectMissing(key);
        await mkdir(parent, { mode: 0o700 }).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== 'EEXIST') throw this.explain(e, key, 'write');
        });
        stats = await lstat(parent);
      }
      if (!stats.isDirectory()) {
        if (!create && stats.isFile()) throw new BackupObjectMissing(key);
        throw this.refusal(key, `has ${parent.slice(this.root.length + 1)}, which is ${kindOf(stats)}, where a folder belongs`);
      }
    }
    if (!join(parent, name).startsWith(this.root + sep)) throw this.refusal(key, 'leaves the backup folder');
    return { parent, name };
  }

  /** Checked again just before the rename: the folder must still be a folder, not a link. */
  private async refuseNonFolder(parent: string, key: string): Promise<void> {
    const stats = await lstat(parent);
    if (!stats.isDirectory()) throw this.refusal(key, 'lost its folder while it was written');
  }

  private async walk(folder: string, relative: string, prefix: string, found: StoredObject[]): Promise<void> {
    const entries = await readdir(folder, { withFileTypes: true });
    for (const entry of entries) {
      // Temporary files of writes in progress, and anything else slipway did not name.
      if (entry.name.startsWith('.')) continue;
      const key = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (key.startsWith(prefix) || prefix.startsWith(`${key}/`)) await this.walk(join(folder, entry.name), key, prefix, found);
      } else if (entry.isFile() && key.startsWith(prefix)) {
        const stats = await lstat(join(folder, entry.name)).catch(() => undefined);
        // Links and anything else are not backup objects: skipped, never followed.
        if (stats?.isFile()) found.push({ key, sizeBytes: stats.size, modifiedAt: stats.mtime });
      }
    }
  }

  private refusal(key: string, what: string): BackupStoreError {
    return new BackupStoreError(
      `The backup object "${key}" in ${this.folder} ${what}; slipway keeps only files and folders there and follows no symbolic link.`,
      `Look at what is at ${join(this.folder, ...key.split('/'))}: only slipway should write in the backup folder.`,
    );
  }

  private explain(e: unknown, key: string, action: 'read' | 'write' | 'delete'): unknown {
    if (e instanceof BackupStoreError || e instanceof BackupObjectMissing) return e;
    const error = e as NodeJS.ErrnoException;
    if (error.code === 'ELOOP' || error.code === 'ENOTDIR') return this.refusal(key, 'is a symbolic link or lies below one');
    if (error.code === 'EISDIR') return this.refusal(key, 'is a folder, not a file');
    if (error.code === 'ENOSPC') {
      return new BackupStoreError(
        `Cannot ${action} the backup object "${key}": the disk of ${this.folder} is full.`,
        'Free space there (delete old backups) or move the backup folder to a larger disk.',
      );
    }
    if (error.code === 'EACCES' || error.code === 'EPERM' || error.code === 'EROFS') {
      return new BackupStoreError(
        `Cannot ${action} the backup object "${key}" in ${this.folder}: ${error.code}.`,
        'Check that the backup folder is writable by the user slipway runs as.',
      );
    }
    return e;
  }
}

function kindOf(stats: Stats): string {
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isDirectory()) return 'a folder';
  if (stats.isFile()) return 'a file';
  return 'not a regular file';
}

/** Makes a rename or unlink in `folder` durable. */
async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
