import { PassThrough, type Readable } from 'node:stream';
import { runStreamed } from '../../executor/run-streamed.js';
import type { BackupStore } from '../store/backup-store.js';

/**
 * A release folder as a tar archive and back. The folder is the app's (everything a push
 * brings is hostile: links to /etc, fifos, odd modes), so tar runs as the app's own user both
 * ways: it reads and writes only what that user may, and root never opens a path inside. The
 * user cannot reach the folder through the data folder (root's alone): the process starts in it
 * (the working folder is entered before the user is taken on) and tar names nothing but `.`.
 */

/** The unix account of an app (its uid and group). */
export interface ReleaseOwner {
  uid: number;
  gid: number;
}

const TAR_ENV = { PATH: '/usr/bin:/bin', LC_ALL: 'C' };

/** Streams the release folder as a tar archive into `store` under `key` (links kept as links, one filesystem). */
export async function archiveRelease(store: BackupStore, key: string, releaseDir: string, owner: ReleaseOwner): Promise<void> {
  const tar = runStreamed({
    argv: ['tar', '--create', '--file=-', '--one-file-system', '.'],
    env: TAR_ENV,
    cwd: releaseDir,
    user: owner,
    name: `tar of the release ${releaseDir}`,
  });
  // Taken up at once: node drains an output nobody reads yet when the process ends (a small
  // release can be all written before the store opens its object).
  const archive = tar.stdout.pipe(new PassThrough());
  // The tool's end is awaited with the upload: a tar that failed midway fails the backup.
  await Promise.all([store.put(key, archive), tar.done]);
}

/**
 * Unpacks an archive into `dest` (an empty folder the owner has), as the owner: modes kept, owners
 * the owner's, names leaving the folder refused by tar itself.
 */
export async function extractRelease(archive: Readable, dest: string, owner: ReleaseOwner): Promise<void> {
  const tar = runStreamed({
    argv: ['tar', '--extract', '--file=-', '--preserve-permissions', '--no-same-owner'],
    env: TAR_ENV,
    cwd: dest,
    user: owner,
    stdin: archive,
    name: `tar unpacking a release into ${dest}`,
  });
  tar.stdout.resume();
  await tar.done;
}
