import { chmod, chown, mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { SystemUser } from './system-user.js';

/** Creates `path` (and parents) and gives it to `owner` with `mode`, whatever existed before. */
export async function ensureDir(path: string, mode: number, owner?: SystemUser): Promise<void> {
  await mkdir(path, { recursive: true, mode });
  if (owner) await chown(path, owner.uid, owner.gid);
  await chmod(path, mode);
}

/**
 * Fails with an explanation when `user` cannot reach `path` because some parent folder lacks
 * the search (x) permission for it, e.g. a data dir made with mkdtemp (0700, root).
 */
export async function assertTraversable(path: string, user: SystemUser): Promise<void> {
  let dir = resolve(path);
  const chain: string[] = [];
  for (;;) {
    chain.unshift(dir);
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  for (const folder of chain) {
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(folder);
    } catch {
      return; // the rest does not exist yet and will be created with suitable modes
    }
    const bit = info.uid === user.uid ? 0o100 : info.gid === user.gid ? 0o010 : 0o001;
    if ((info.mode & bit) === 0) {
      throw new Error(
        `The add-on server user "${user.name}" cannot enter ${folder} (mode ${(info.mode & 0o777).toString(8)}, ` +
          `owner uid ${info.uid}), so it cannot reach ${path}. Allow it with "chmod o+x ${folder}" ` +
          `or choose a data directory under a folder others can enter.`,
      );
    }
  }
}
