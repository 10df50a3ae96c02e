import { createHash } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { copyFile, lstat, mkdir, open, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { ManifestFile } from './manifest.js';

/**
 * Copies the platform's own files (the CA, the SSH host key...) from the data folder: regular
 * files and folders only, never through a symbolic link; absent sources are skipped.
 */
export async function copyPlatformFiles(source: string, dest: string): Promise<number> {
  const info = await lstat(source).catch(() => undefined);
  if (!info) return 0;
  if (info.isFile()) {
    await copyFile(source, dest, constants.COPYFILE_EXCL);
    return 1;
  }
  if (!info.isDirectory()) throw new Error(`${source} is neither a file nor a folder; the backup does not follow it.`);
  await mkdir(dest, { mode: 0o700 });
  let copied = 0;
  for (const name of await readdir(source)) copied += await copyPlatformFiles(join(source, name), join(dest, name));
  return copied;
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/** Every regular file under `root` with its size and SHA-256, sorted by path; anything else is refused. */
export async function checksumTree(root: string, dir = root): Promise<ManifestFile[]> {
  const files: ManifestFile[] = [];
  for (const name of (await readdir(dir)).sort()) {
    const path = join(dir, name);
    const info = await lstat(path);
    if (info.isDirectory()) files.push(...(await checksumTree(root, path)));
    else if (info.isFile()) files.push({ path: relative(root, path), size_bytes: info.size, sha256: await sha256File(path) });
    else throw new Error(`${path} is neither a file nor a folder.`);
  }
  return files;
}

/** Makes a file's content durable (before the rename that publishes the backup). */
export async function syncPath(path: string): Promise<void> {
  const handle = await open(path, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Each file as the manifest says: present, regular, same size and checksum; else the backup is refused. */
export async function checkFiles(root: string, files: readonly ManifestFile[]): Promise<void> {
  for (const file of files) {
    const path = join(root, file.path);
    const info = await lstat(path).catch(() => undefined);
    if (!info?.isFile()) throw new Error(`The backup lacks ${file.path}, which its manifest lists.`);
    if (info.size !== file.size_bytes || (await sha256File(path)) !== file.sha256) {
      throw new Error(`${file.path} in the backup does not match its checksum in the manifest: the backup is damaged.`);
    }
  }
}
