import { chmod, lchown, lstat, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * A folder of the platform's layout (never a path from a repository) that belongs to an app's
 * user with mode 0700: created when missing, its parents root's own, and refused when something
 * other than a real folder stands at its name.
 */
export async function ownedFolder(path: string, user: { uid: number; gid: number }): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await mkdir(path, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  const info = await lstat(path);
  if (!info.isDirectory()) throw new Error(`${path} should be a folder of the platform but is not; remove it and try again.`);
  await lchown(path, user.uid, user.gid);
  await chmod(path, 0o700);
}
