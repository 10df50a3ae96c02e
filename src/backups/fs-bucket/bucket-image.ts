import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip, constants as zlib } from 'node:zlib';
import { runStreamed } from '../../executor/run-streamed.js';
import type { BackupStore } from '../store/backup-store.js';

/**
 * A bucket's image in the backup store: a tar holding the one sparse file (its holes kept as
 * holes, so an empty 1 GiB bucket is a few hundred KiB), gzipped. The image is read as a block
 * file: nothing inside the bucket is opened. GNU tar handles the holes both ways (`--sparse`).
 */

export const BUCKET_PREFIX = 'fs-bucket/';
const TAR_ENV = { PATH: '/usr/bin:/bin', LC_ALL: 'C' };

/** Where the image of one backup goes in the backup store. */
export function imageKey(addonId: string, backupId: string): string {
  if (!/^addon_[0-9a-f-]{36}$/.test(addonId) || !/^[A-Za-z0-9_]+$/.test(backupId)) {
    throw new Error(`"${addonId}"/"${backupId}" cannot name a bucket image.`);
  }
  return `${BUCKET_PREFIX}${addonId}/${backupId}.img.tar.gz`;
}

/** The one member of the archive: the image's name (`<add-on id>.img`). */
export function memberName(addonId: string): string {
  if (!/^addon_[0-9a-f-]{36}$/.test(addonId)) throw new Error(`Not an add-on id: ${JSON.stringify(addonId.slice(0, 60))}.`);
  return `${addonId}.img`;
}

export function packArgv(folder: string, member: string): string[] {
  return ['tar', '--create', '--sparse', '--format=gnu', '--file=-', '--directory', folder, '--', member];
}

/** Only the member named is unpacked, as a file of root's with no owner or mode taken from the archive. */
export function unpackArgv(folder: string, member: string): string[] {
  return ['tar', '--extract', '--file=-', '--directory', folder, '--no-same-owner', '--no-same-permissions', '--', member];
}

/** Gzip's fastest level: the holes are not in the stream, and what is left is mostly the apps' own (often compressed) files. */
const GZIP_LEVEL = zlib.Z_BEST_SPEED;

/** Streams `<folder>/<member>` into the store as a gzipped tar; resolves with the stored object's size. */
export async function storeImage(store: BackupStore, key: string, folder: string, member: string): Promise<number> {
  const tar = runStreamed({ argv: packArgv(folder, member), env: TAR_ENV, cwd: '/', name: 'tar of the bucket image' });
  const packed = tar.stdout.pipe(createGzip({ level: GZIP_LEVEL })).pipe(new PassThrough());
  const [stored] = await Promise.all([store.put(key, packed), tar.done]);
  return stored.sizeBytes;
}

/** Unpacks the stored image into `folder` (root's, empty) and checks it is one plain file. */
export async function fetchImage(store: BackupStore, key: string, folder: string, member: string): Promise<string> {
  const gunzip = createGunzip();
  const body = await store.get(key);
  const tar = runStreamed({
    argv: unpackArgv(folder, member),
    env: TAR_ENV,
    cwd: '/',
    stdin: gunzip,
    name: 'tar unpacking a bucket image',
  });
  tar.stdout.resume();
  await Promise.all([
    pipeline(body, gunzip).catch((error: Error) => Promise.reject(new Error(`The image could not be read: ${error.message}`))),
    tar.done,
  ]);
  const path = `${folder}/${member}`;
  const info = await lstat(path);
  if (!info.isFile() || info.nlink !== 1) throw new Error(`The backup's ${member} is not a plain file.`);
  return path;
}

/** The SHA-256 of the image as a block file (holes read as zeros), opened without following a link. */
export async function imageSha256(path: string): Promise<{ sha256: string; sizeBytes: number }> {
  const file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of file.createReadStream({ highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { sha256: hash.digest('hex'), sizeBytes: size };
}
