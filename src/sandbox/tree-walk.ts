/**
 * How UntrustedTree (./untrusted-tree.ts) resolves a path: the semantics of openat2's
 * RESOLVE_BENEATH, done by hand. Component by component from the tree's root, each one looked at
 * with lstat. A symbolic link is followed only when its target is relative and stays inside the
 * tree (`..` never climbs above the root); an absolute target, a climb out, or more than
 * MAX_LINKS links refuse the path. Every folder on the way is checked to be a real folder.
 * Nothing outside the root is ever looked at, so a refusal tells nothing about the machine.
 *
 * Kept apart from the tree's reads and writes so that the one piece every access relies on can
 * be read (and reviewed) on its own; what a refusal says is in ./tree-refusals.ts.
 */
import type { Stats } from 'node:fs';
import { lstat, readlink } from 'node:fs/promises';
import { join } from 'node:path';

/** Links followed on the way to one path before it counts as a loop (Linux's own limit). */
export const MAX_LINKS = 40;

export type EntryKind = 'file' | 'folder' | 'symlink' | 'fifo' | 'socket' | 'device';

export function kindOf(stats: Stats): EntryKind {
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'folder';
  if (stats.isSymbolicLink()) return 'symlink';
  if (stats.isFIFO()) return 'fifo';
  if (stats.isSocket()) return 'socket';
  return 'device';
}

/** The names of a relative path, without empty and `.` components. */
export function components(rel: string): string[] {
  return rel.split('/').filter((part) => part !== '' && part !== '.');
}

export function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

export type Walk =
  | { found: true; real: string[]; stats: Stats }
  /** `real`: the part that exists; `rest`: what is missing from there (first name first). */
  | { found: false; real: string[]; rest: string[]; blocker?: { real: string[]; kind: EntryKind } };

/** The errors a walk throws; the tree supplies them so that they name it and its next step. */
export interface WalkRefusals {
  absolutePath(rel: string): Error;
  linkLoop(shown: string, asked: string): Error;
  absoluteLink(shown: string, asked: string): Error;
  /** A climb above the root: through the last link followed, or written in `asked` itself. */
  outside(link: string | undefined, asked: string): Error;
}

/**
 * Resolves `rel` from `root`, one component at a time, following only links that stay inside.
 * `followLast`: whether a link as the last component is followed or returned. `asked`: the path
 * the caller was asked for, which refusals name.
 */
export async function walkTree(root: string, rel: string, followLast: boolean, asked: string, refusals: WalkRefusals): Promise<Walk> {
  if (rel.startsWith('/')) throw refusals.absolutePath(rel);
  const pending = components(rel);
  const real: string[] = [];
  let links = 0;
  let lastLink: string | undefined;
  while (pending.length > 0) {
    const name = pending.shift()!;
    if (name === '.') continue;
    if (name === '..') {
      if (real.length === 0) throw refusals.outside(lastLink, asked);
      real.pop();
      continue;
    }
    const path = join(root, ...real, name);
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
      if (++links > MAX_LINKS) throw refusals.linkLoop(shown, asked);
      const target = await readlink(path);
      if (target.startsWith('/')) throw refusals.absoluteLink(shown, asked);
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
    return { found: true, real, stats: await lstat(join(root, ...real)) };
  } catch (error) {
    if (isMissing(error) && real.length === 0) return { found: false, real, rest: [] };
    throw error;
  }
}
