import { chmod, lchown, lstat, mkdir, readdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { SystemUser } from '../system-user.js';

/**
 * Gives an add-on's folder `<root>/<name>` and everything in it to the add-on's server user, as
 * root. A folder from before per-add-on users belongs to the shared account whose server could
 * write anything there, so nothing in it is trusted: a symbolic link anywhere is refused (and
 * lchown never follows one), the folder must be a real folder directly inside `root`, and only
 * folders and regular files are handed over. Error messages name no path read from inside.
 */
export async function giveFolderTo(root: string, name: string, user: SystemUser): Promise<void> {
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(name)) throw new Error('Invalid add-on folder name.');
  const dir = join(root, name);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const info = await lstat(dir);
  if (info.isSymbolicLink() || !info.isDirectory()) {
    throw new Error(`The Redis add-on folder ${dir} is not a folder (a symbolic link?); refusing to use it.`);
  }
  if ((await realpath(dir)) !== join(await realpath(root), name)) {
    throw new Error(`The Redis add-on folder ${dir} is not inside ${root}; refusing to use it.`);
  }
  await giveTree(dir, dir, user, 0);
  await chmod(dir, 0o700); // the add-on's alone (lstat above: a real folder, not a link)
}

async function giveTree(dir: string, top: string, user: SystemUser, depth: number): Promise<void> {
  if (depth > 8) throw new Error(`The Redis add-on folder ${top} is nested deeper than a Redis server makes it; refusing to change it.`);
  const info = await lstat(dir);
  if (info.uid !== user.uid || info.gid !== user.gid) await lchown(dir, user.uid, user.gid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      await giveTree(path, top, user, depth + 1);
    } else if (entry.isFile()) {
      const file = await lstat(path);
      if (file.uid !== user.uid || file.gid !== user.gid) await lchown(path, user.uid, user.gid);
    } else {
      throw new Error(
        `The Redis add-on folder ${top} holds a symbolic link or a special file, which a Redis server does not make; ` +
          'remove it and start again.',
      );
    }
  }
}
