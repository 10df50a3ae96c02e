/**
 * The one door through which the daemon (root) touches a tree an application controls: the
 * export of a pushed commit, a build folder, a release folder, the app's cache and home. Every
 * name in such a tree may be a symbolic link, a fifo or a folder where a file is expected, put
 * there by whoever can push; followed by root, one link reads the admin token or writes into
 * /etc. The rule and the two allowed ways are in ./README.md.
 *
 * How a path is resolved (the semantics of openat2's RESOLVE_BENEATH, done by hand): component
 * by component from the tree's root, each one looked at with lstat. A symbolic link is followed
 * only when its target is relative and stays inside the tree (`..` never climbs above the
 * root); an absolute target, a climb out, or more than MAX_LINKS links refuse the path. Every
 * folder on the way is checked to be a real folder, and the last component is opened with
 * O_NOFOLLOW and checked again with fstat. Nothing outside the root is ever looked at, so a
 * refusal tells nothing about the machine.
 *
 * Assumption this relies on: no process of the app runs while the daemon walks its tree (the
 * export and build steps have ended or not started; instances see only their own release
 * folder, in their sandbox). A checked lstat walk cannot race an attacker who is not running.
 * Code that must touch a tree while the app runs has to run as the app's user in its sandbox.
 *
 * Hard links need no check: the kernel lets a user hard-link only files it may read and write
 * itself (fs.protected_hardlinks, on by default in Debian), and a sandbox shows no other file.
 *
 * Refusals are PlanErrors naming the path relative to the tree's root and what to do; they
 * never quote what was read, nor where a link points.
 */
import { constants, type Stats } from 'node:fs';
import { lchown, lstat, mkdir, open, readdir, readlink, rename, rm, unlink } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { PlanError } from '../core/errors.js';
import { runCommand } from '../executor/run-command.js';

/** Links followed on the way to one path before it counts as a loop (Linux's own limit). */
export const MAX_LINKS = 40;

/** What the daemon reads of one file unless told otherwise: project files are small. */
export const DEFAULT_MAX_BYTES = 1024 * 1024;

export type EntryKind = 'file' | 'folder' | 'symlink' | 'fifo' | 'socket' | 'device';

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

/** A path of an untrusted tree the daemon will not touch, with what to do about it. */
export class RefusedPathError extends PlanError {
  constructor(message: string, hint: string) {
    super(message, hint);
    this.name = 'RefusedPathError';
  }
}

const OPEN_READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const OPEN_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NOCTTY;

function kindOf(stats: Stats): EntryKind {
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'folder';
  if (stats.isSymbolicLink()) return 'symlink';
  if (stats.isFIFO()) return 'fifo';
  if (stats.isSocket()) return 'socket';
  return 'device';
}

const KIND_TEXT: Record<EntryKind, string> = {
  file: 'a file',
  folder: 'a folder',
  symlink: 'a symbolic link',
  fifo: 'a named pipe (fifo)',
  socket: 'a socket',
  device: 'a device file',
};

function components(rel: string): string[] {
  return rel.split('/').filter((part) => part !== '' && part !== '.');
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

type Walk =
  | { found: true; real: string[]; stats: Stats }
  /** `real`: the part that exists; `rest`: what is missing from there (first name first). */
  | { found: false; real: string[]; rest: string[]; blocker?: { real: string[]; kind: EntryKind } };

export class UntrustedTree {
  constructor(
    /** A folder of the platform's own layout (trusted itself); everything below it is not. */
    readonly root: string,
    private readonly options: UntrustedTreeOptions,
  ) {}

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
    const walk = await this.walk(rel, true);
    if (!walk.found) return undefined;
    const shown = walk.real.join('/');
    if (!walk.stats.isFile()) throw this.notAFile(shown, rel, kindOf(walk.stats));
    const max = limits.maxBytes ?? DEFAULT_MAX_BYTES;
    const handle = await open(join(this.root, ...walk.real), OPEN_READ).catch((error: NodeJS.ErrnoException) => {
      // O_NOFOLLOW met a link that was not there at the walk: refuse rather than guess.
      if (error.code === 'ELOOP')
        throw this.refuse(`${this.where(shown, rel)} changed into a symbolic link while slipway read it`, 'Push again.');
      throw error;
    });
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw this.notAFile(shown, rel, kindOf(stats));
      if (stats.size > max && !limits.truncate) {
        throw this.refuse(
          `${this.where(shown, rel)} is larger than ${describeBytes(max)}, more than slipway reads from ${this.options.name}`,
          `Make ${shown} smaller than ${describeBytes(max)}, ${this.nextStep()}.`,
        );
      }
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
    const walk = await this.walk(rel, true);
    if (!walk.found) return undefined;
    const shown = walk.real.join('/');
    if (!walk.stats.isFile()) throw this.notAFile(shown, rel, kindOf(walk.stats));
    const handle = await open(join(this.root, ...walk.real), OPEN_READ).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ELOOP')
        throw this.refuse(`${this.where(shown, rel)} changed into a symbolic link while slipway read it`, 'Push again.');
      throw error;
    });
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw this.notAFile(shown, rel, kindOf(stats));
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
        throw this.notAFolder(walk.real.join('/'), asked, kindOf(walk.stats));
      }
      if (walk.blocker) throw this.notAFolder(walk.blocker.real.join('/'), asked, walk.blocker.kind);
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
    throw this.refuse(`${rel} could not be made in ${this.options.name}`, `Remove what stands at ${rel}, ${this.nextStep()}.`);
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
      throw this.refuse(
        `${shown} is a folder in ${this.options.name}, where slipway writes a file it generates`,
        `Remove the folder ${shown} (slipway writes this file itself), ${this.nextStep()}.`,
      );
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

  /**
   * Resolves `rel` from the root, one component at a time, following only links that stay
   * inside. `followLast`: whether a link as the last component is followed or returned.
   */
  private async walk(rel: string, followLast: boolean, asked = rel): Promise<Walk> {
    if (rel.startsWith('/'))
      throw this.refuse(`${rel} is an absolute path, not a path inside ${this.options.name}`, `Use a relative path, ${this.nextStep()}.`);
    const pending = components(rel);
    const real: string[] = [];
    let links = 0;
    let lastLink: string | undefined;
    while (pending.length > 0) {
      const name = pending.shift()!;
      if (name === '.') continue;
      if (name === '..') {
        if (real.length === 0) throw this.outside(lastLink, asked);
        real.pop();
        continue;
      }
      const path = join(this.root, ...real, name);
      let stats: Stats;
      try {
        stats = await lstat(path);
      } catch (error) {
        if (isMissing(error)) return { found: false, real, rest: [name, ...pending] };
        throw error;
      }
      const last = pending.length === 0;
      if (stats.isSymbolicLink() && (!last || followLast)) {
        const shown = [...real, name].join('/');
        if (++links > MAX_LINKS) {
          throw this.refuse(
            `${this.where(shown, asked)} is a symbolic link that loops (more than ${MAX_LINKS} links on the way)`,
            `Replace the links by the files themselves, ${this.nextStep()}.`,
          );
        }
        const target = await readlink(path);
        if (target.startsWith('/')) {
          throw this.refuse(
            `${this.where(shown, asked)} is a symbolic link to an absolute path, which slipway does not follow in ${this.options.name}`,
            `Commit the file itself instead of a link (a link may only point inside ${this.options.name}, by a relative path), ${this.nextStep()}.`,
          );
        }
        lastLink = shown;
        pending.unshift(...components(target));
        continue;
      }
      real.push(name);
      if (last) return { found: true, real, stats };
      if (!stats.isDirectory()) {
        return { found: false, real: real.slice(0, -1), rest: [name, ...pending], blocker: { real: [...real], kind: kindOf(stats) } };
      }
    }
    // `rel` led back to the root itself (or was empty).
    try {
      return { found: true, real, stats: await lstat(join(this.root, ...real)) };
    } catch (error) {
      if (isMissing(error) && real.length === 0) return { found: false, real, rest: [] };
      throw error;
    }
  }

  private nextStep(): string {
    return this.options.nextStep ?? 'then push again';
  }

  /** `config` or `config (on the way to config/app.json)`. */
  private where(shown: string, rel: string): string {
    const asked = components(rel).join('/');
    return shown === asked || asked === '' ? shown : `${shown} (on the way to ${asked})`;
  }

  private refuse(message: string, hint: string): RefusedPathError {
    return new RefusedPathError(`${message}.`, hint);
  }

  /** A climb above the root: through the last link followed, or written in `rel` itself. */
  private outside(link: string | undefined, rel: string): RefusedPathError {
    if (link === undefined) {
      return this.refuse(
        `${rel} leads outside ${this.options.name}`,
        `Use a path inside ${this.options.name}, without "..", ${this.nextStep()}.`,
      );
    }
    return this.refuse(
      `${this.where(link, rel)} is a symbolic link to a path outside ${this.options.name}`,
      `Commit the file itself instead of a link (a link may only point inside ${this.options.name}), ${this.nextStep()}.`,
    );
  }

  private notAFile(shown: string, rel: string, kind: EntryKind): RefusedPathError {
    return this.refuse(
      `${this.where(shown, rel)} is ${KIND_TEXT[kind]} in ${this.options.name}, where slipway expects a regular file`,
      `Make ${shown} a regular file (or remove it), ${this.nextStep()}.`,
    );
  }

  private notAFolder(shown: string, rel: string, kind: EntryKind): RefusedPathError {
    return this.refuse(
      `${this.where(shown, rel)} is ${KIND_TEXT[kind]} in ${this.options.name}, where slipway needs a folder`,
      `Remove ${shown} or make it a folder, ${this.nextStep()}.`,
    );
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

function describeBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MiB` : bytes >= 1024 ? `${bytes / 1024} KiB` : `${bytes} bytes`;
}

/** A pushed commit's export (or a build folder before its build), as messages name it. */
export function repositoryTree(root: string, owner?: Owner): UntrustedTree {
  return new UntrustedTree(root, { name: 'the repository', owner });
}
