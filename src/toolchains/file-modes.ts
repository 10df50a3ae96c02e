/**
 * Toolchains are fetched by the daemon and run by unprivileged build users, so every file must
 * be readable by others, and everything executable by its owner executable by others.
 */
import { chmod, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** The mode a file should get: readable by all, writable by owner only, exec bits spread. */
export function shareableMode(mode: number, isDirectory: boolean): number {
  if (isDirectory) return 0o755;
  const own = mode & 0o777;
  return own & 0o100 ? 0o755 : 0o644;
}

/** Applies shareableMode to a tree (symlinks are left alone: their mode is not used). */
export async function makeTreeShareable(root: string): Promise<void> {
  const stats = await lstat(root);
  if (stats.isSymbolicLink()) return;
  await chmod(root, shareableMode(stats.mode, stats.isDirectory()));
  if (!stats.isDirectory()) return;
  for (const entry of await readdir(root)) await makeTreeShareable(join(root, entry));
}
