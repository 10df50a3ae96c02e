/**
 * The one door through which the daemon (root) touches a tree an application controls: the
 * export of a pushed commit, a build folder, a release folder, the app's cache and home. Every
 * name in such a tree may be a symbolic link, a fifo or a folder where a file is expected, put
 * there by whoever can push; followed by root, one link reads the admin token or writes into
 * /etc. The rule and the two allowed ways are in ./README.md.
 *
 * Every path is first resolved beneath the tree's root by ./tree-walk.ts (links followed only
 * while they stay inside); the last component is then opened with O_NOFOLLOW and checked again
 * with fstat.
 *
 * Assumption this relies on: no process of the app runs while the daemon walks its tree (the
 * export and build steps have ended or not started; instances see only their own release
 * folder, in their sandbox). A checked lstat walk cannot race an attacker who is not running.
 * Code that must touch a tree while the app runs has to run as the app's user in its sandbox.
 *
 * Hard links need no check: the kernel lets a user hard-link only files it may read and write
 * itself (fs.protected_hardlinks, on by default in Debian), and a sandbox shows no other file.
 *
 * Refusals are RefusedPathErrors (./tree-refusals.ts) naming the path relative to the tree's
 * root and what to do; they never quote what was read, nor where a link points.
 */
import { constants } from 'node:fs';
import { type FileHandle, lchown, lstat, mkdir, open, readdir, rename, rm, unlink } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { runCommand } from '../executor/run-command.js';
import { TreeRefusals } from './tree-refusals.js';
import { components, type EntryKind, isMissing, kindOf, MAX_LINKS, type Walk, walkTree } from './tree-walk.js';

// Part of this door: callers catch its refusals and count links without knowing where they live.
export { RefusedPathError } from './tree-refusals.js';
export { type EntryKind, MAX_LINKS } from './tree-walk.js';

/** What the daemon reads of one file unless told otherwise: project files are small. */
export const DEFAULT_MAX_BYTES = 1024 * 1024;

export interface TreeEntry {
  name: string;
  /** The entry itself: a link is `symlink`, never what it points to. */
  kind: EntryKind;
}

export interface ResolvedEntry {
  /** Where the entry really is, relative to the root, after following links inside the tree. */
  path: string;
  kind: EntryKind;
  /** Permission bits (for "is it executable"). */
  mode: number;
  size: number;
}

export interface Owner {
  uid: number;
  gid: number;
}

export interface UntrustedTreeOptions {
  /** How messages name the tree: "the repository", "the build folder", "the app's cache folder". */
  name: string;
  /** Ends every hint: what the user does once the tree is fixed (default: push again). */
  nextStep?: string;
  /** Owner given to what the daemon creates in the tree (folders, written files). */
  owner?: Owner;
}

const OPEN_READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const OPEN_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NOCTTY;

export class UntrustedTree {
  private readonly refusals: TreeRefusals;

  constructor(
    /** A folder of the platform's own layout (trusted itself); everything below it is not. */
    readonly root: string,
    private readonly options: UntrustedTreeOptions,
  ) {
    this.refusals = new TreeRefusals(options.name, options.nextStep);
  }

  /** What `rel` is once links inside the tree are followed; undefined when it does not exist. */
  async entry(rel: string): Promise<ResolvedEntry | undefined> {
    const walk = await this.walk(rel, true);
    if (!walk.found) return undefined;
    return { path: walk.real.join('/'), kind: kindOf(walk.stats), mode: walk.stats.mode & 0o7777, size: walk.stats.size };
  }

  async isFile(rel: string): Promise<boolean> {
    return (await this.entry(rel))?.kind === 'file';
  }

  async isFolder(rel: string): Promise<boolean> {
    return (await this.entry(rel))?.kind === 'folder';
  }

  /**
   * The text of a regular file, undefined when it does not exist. A link leading out, a folder,
   * a fifo or a device, or a file larger than maxBytes is refused; with `truncate`, a larger
   * file gives its first maxBytes instead.
   */
  async readText(rel: string, limits: { maxBytes?: number; truncate?: boolean } = {}): Promise<string | undefined> {
    const opened = await this.openFile(rel);
    if (!opened) return undefined;
    const { handle, shown } = opened;
    const max = limits.maxBytes ?? DEFAULT_MAX_BYTES;
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw this.refusals.notAFile(shown, rel, kindOf(stats));
      if (stats.size > max && !limits.truncate) throw this.refusals.tooLarge(shown, rel, max);
      const buffer = Buffer.alloc(Math.min(stats.size, max));
      let filled = 0;
      while (filled < buffer.length) {
        const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return buffer.toString('utf8', 0, filled);
    } finally {
      await handle.close();
    }
  }

  /**
   * The SHA-256 (hex) of a regular file's bytes, undefined when it does not exist; refused as
   * readText refuses. Read in chunks, so a large lockfile costs no memory.
   */
  async sha256(rel: string): Promise<string | undefined> {
    const opened = await this.openFile(rel);
    if (!opened) return undefined;
    const { handle, shown } = opened;
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw this.refusals.notAFile(shown, rel, kindOf(stats));
      const hash = createHash('sha256');
      const buffer = Buffer.alloc(Math.min(Math.max(stats.size, 1), 1024 * 1024));
      for (let position = 0; ; ) {
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
        if (bytesRead === 0) break;
        hash.update(buffer.subarray(0, bytesRead));
        position += bytesRead;
      }
      return hash.digest('hex');
    } finally {
      await handle.close();
    }
  }

  /**
   * The regular file at `rel` opened for reading (O_NOFOLLOW), with the path it was found at;
   * undefined when it does not exist. The caller checks the handle with fstat and closes it.
   */
  private async openFile(rel: string): Promise<{ handle: FileHandle; shown: string } | undefined> {
    const walk = await this.walk(rel, true);
    if (!walk.found) return undefined;
    const shown = walk.real.join('/');
    if (!walk.stats.isFile()) throw this.refusals.notAFile(shown, rel, kindOf(walk.stats));
    const handle = await open(join(this.root, ...walk.real), OPEN_READ).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ELOOP') throw this.refusals.changedIntoLink(shown, rel);
      throw error;
    });
    return { handle, shown };
  }

  /** The entries of a folder (links listed as links, not followed); empty when it does not exist. */
  async list(rel: string): Promise<TreeEntry[]> {
    const walk = await this.walk(rel, true);
    if (!walk.found || !walk.stats.isDirectory()) return [];
    const folder = join(this.root, ...walk.real);
    const entries: TreeEntry[] = [];
    for (const dirent of await readdir(folder, { withFileTypes: true })) {
      let kind: EntryKind | undefined;
      if (dirent.isFile()) kind = 'file';
      else if (dirent.isDirectory()) kind = 'folder';
      else if (dirent.isSymbolicLink()) kind = 'symlink';
      else kind = await lstat(join(folder, dirent.name)).then(kindOf, () => undefined);
      if (kind) entries.push({ name: dirent.name, kind });
    }
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * A real folder at `rel`, made (with its missing parents, given to the owner) when absent.
   * Returns its absolute path. A file or a link leading out on the way is refused.
   */
  async makeFolder(rel: string, mode = 0o755): Promise<string> {
    return this.folderFor(rel, rel, mode);
  }

  /** makeFolder, naming `asked` (the file the folder is for) in messages. */
  private async folderFor(rel: string, asked: string, mode = 0o755): Promise<string> {
    // Each round makes one missing folder; a path has fewer components than links allowed.
    for (let round = 0; round < components(rel).length + MAX_LINKS + 2; round++) {
      const walk = await this.walk(rel, true, asked);
      if (walk.found) {
        if (walk.stats.isDirectory()) return join(this.root, ...walk.real);
        throw this.refusals.notAFolder(walk.real.join('/'), asked, kindOf(walk.stats));
      }
      if (walk.blocker) throw this.refusals.notAFolder(walk.blocker.real.join('/'), asked, walk.blocker.kind);
      // The root is the platform's to make, never this module's.
      const rootMissing = () => new Error(`${this.root} does not exist: ${this.options.name} should have been made before.`);
      if (walk.rest.length === 0) throw rootMissing();
      const made = join(this.root, ...walk.real, walk.rest[0]!);
      try {
        await mkdir(made, { mode });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' && walk.real.length === 0) throw rootMissing();
        if (code !== 'EEXIST') throw error;
        continue;
      }
      if (this.options.owner) await chownEntry(made, this.options.owner);
    }
    throw this.refusals.cannotMake(rel);
  }

  /**
   * Writes a generated file: a new file (O_EXCL|O_NOFOLLOW) beside the target, then renamed over
   * it, so a link or a fifo at that name is replaced, never written through. A folder at that
   * name is refused; missing parent folders are made.
   */
  async writeFile(rel: string, content: string | Buffer, options: { mode?: number } = {}): Promise<void> {
    const { parent, name } = this.split(rel);
    const mode = options.mode ?? 0o644;
    const folder = await this.folderFor(parent, rel);
    const target = join(folder, name);
    const existing = await lstat(target).catch((error) => {
      if (isMissing(error)) return undefined;
      throw error;
    });
    const shown = [parent, name].filter(Boolean).join('/');
    if (existing?.isDirectory()) {
      throw this.refusals.folderWhereFileGoes(shown);
    }
    const temporary = join(folder, `.${name.slice(0, 100)}.slipway-${randomBytes(6).toString('hex')}`);
    const handle = await open(temporary, OPEN_NEW, mode);
    try {
      try {
        await handle.writeFile(content);
        if (this.options.owner && mayGiveAway()) await handle.chown(this.options.owner.uid, this.options.owner.gid);
        await handle.chmod(mode);
      } finally {
        await handle.close();
      }
      await rename(temporary, target);
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Removes `rel` itself: a link is unlinked (never what it points to), a folder removed with
   * everything in it (links inside are unlinked, not followed). False when nothing was there.
   */
  async remove(rel: string): Promise<boolean> {
    const { parent, name } = this.split(rel);
    const walk = await this.walk(parent, true, rel);
    if (!walk.found || !walk.stats.isDirectory()) return false;
    const path = join(this.root, ...walk.real, name);
    const stats = await lstat(path).catch((error) => {
      if (isMissing(error)) return undefined;
      throw error;
    });
    if (!stats) return false;
    if (stats.isDirectory()) await rm(path, { recursive: true, force: true });
    else await unlink(path);
    return true;
  }

  /**
   * Moves the folder `rel` of this tree to `targetRel` of `target` (a rename: both trees are on
   * the data folder's file system), replacing what was there. Only a real folder moves: false
   * when `rel` is missing or is not a folder (a link is left where it is).
   */
  async moveFolderTo(rel: string, target: UntrustedTree, targetRel: string): Promise<boolean> {
    const source = await this.realFolder(rel);
    if (!source) return false;
    const destination = await target.freshPlace(targetRel);
    await rename(source, destination);
    return true;
  }

  /**
   * Copies the folder `rel` to `targetRel` of `target` with `cp -a` (links copied as links, never
   * followed; modes and owners kept), replacing what was there. False when `rel` is missing or is
   * not a real folder, or when the copy failed (nothing half-copied is left).
   */
  async copyFolderTo(rel: string, target: UntrustedTree, targetRel: string): Promise<boolean> {
    const source = await this.realFolder(rel);
    if (!source) return false;
    const destination = await target.freshPlace(targetRel);
    // Both ends are checked folders and nothing of the app runs, so cp never meets a link it
    // did not create itself; -a implies --no-dereference for everything inside.
    const result = await runCommand({
      argv: ['cp', '-a', '--reflink=auto', '--no-target-directory', '--', source, destination],
      cwd: '/',
      env: { PATH: '/usr/bin:/bin', LC_ALL: 'C' },
    });
    if (result.exitCode === 0) return true;
    await target.remove(targetRel);
    return false;
  }

  /** The absolute path of `rel` when it is a real folder (the name itself not a link). */
  private async realFolder(rel: string): Promise<string | undefined> {
    const { parent, name } = this.split(rel);
    const walk = await this.walk(parent, true, rel);
    if (!walk.found || !walk.stats.isDirectory()) return undefined;
    const path = join(this.root, ...walk.real, name);
    const stats = await lstat(path).catch(() => undefined);
    return stats?.isDirectory() ? path : undefined;
  }

  /** An absolute path at `rel` with nothing there any more, in a real parent folder. */
  private async freshPlace(rel: string): Promise<string> {
    const { parent, name } = this.split(rel);
    const folder = await this.folderFor(parent, rel);
    await this.remove(rel);
    return join(folder, name);
  }

  private split(rel: string): { parent: string; name: string } {
    const parts = components(rel);
    const name = parts.pop();
    if (name === undefined || name === '..') throw new Error(`Not a name inside ${this.options.name}: ${JSON.stringify(rel)}.`);
    return { parent: parts.join('/'), name };
  }

  /** Resolves `rel` beneath the root (./tree-walk.ts), refusals naming this tree. */
  private walk(rel: string, followLast: boolean, asked = rel): Promise<Walk> {
    return walkTree(this.root, rel, followLast, asked, this.refusals);
  }
}

/** Only root may give files away; a daemon run by a user (development) keeps them its own. */
function mayGiveAway(): boolean {
  return process.getuid?.() === 0;
}

async function chownEntry(path: string, owner: Owner): Promise<void> {
  // lchown: the entry itself, never a link's target.
  if (mayGiveAway()) await lchown(path, owner.uid, owner.gid);
}

/** A pushed commit's export (or a build folder before its build), as messages name it. */
export function repositoryTree(root: string, owner?: Owner): UntrustedTree {
  return new UntrustedTree(root, { name: 'the repository', owner });
}
