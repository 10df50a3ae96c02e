/**
 * The backup store as the operator configured it: a folder or an S3 URL, encrypted when a key
 * file is given. The daemon and the CLI open it here, so both refuse the same bad combinations
 * with the same words.
 */
import { dirname, basename, join } from 'node:path';
import { BackupStoreError, type BackupStore } from './backup-store.js';
import { EncryptedBackupStore, loadBackupKey } from './encrypted-store.js';
import { FolderBackupStore } from './folder-store.js';
import type { EgressGuard } from '../../network/egress-guard.js';
import { parseS3Url, readS3CredentialsFile, S3BackupStore, s3CredentialsFromEnv } from './s3-store.js';

export interface BackupStoreOptions {
  /** An absolute folder for the backups (see defaultBackupFolder). */
  folder?: string;
  /** `http(s)://host:port/bucket/optional/prefix` of an S3-compatible object store. */
  s3Url?: string;
  /** A file of `access_key_id=…` and `secret_access_key=…` lines (mode 0600); else AWS_* from env. */
  s3CredentialsFile?: string;
  /** A file of at least 32 bytes (mode 0600): every object is encrypted with a key derived from it. */
  keyFile?: string;
  /** Where AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN and AWS_REGION are read. */
  env: NodeJS.ProcessEnv;
  /** Bytes per part of an S3 multipart upload (at least 5 MiB; default 16 MiB). */
  s3PartSizeBytes?: number;
  /** The daemon's egress guard for the S3 endpoint (the CLI, run by the operator, has none). */
  egress?: EgressGuard;
}

/** Backups beside the data folder, never inside it: `/var/lib/slipway` → `/var/lib/slipway-backups`. */
export function defaultBackupFolder(dataDir: string): string {
  const trimmed = dataDir.length > 1 ? dataDir.replace(/\/+$/, '') : dataDir;
  return join(dirname(trimmed), `${basename(trimmed)}-backups`);
}

export async function openBackupStore(options: BackupStoreOptions): Promise<BackupStore> {
  const { folder, s3Url, s3CredentialsFile, keyFile, env } = options;
  if (folder && s3Url) {
    throw new BackupStoreError(
      `Backups go to one place: both a folder (${folder}) and an S3 URL (${parseS3Url(s3Url).endpoint}) were given.`,
      'Give either the backup folder or the S3 URL.',
    );
  }
  if (s3CredentialsFile && !s3Url) {
    throw new BackupStoreError(
      `An S3 credentials file (${s3CredentialsFile}) was given, but no S3 URL: backups go to ${folder ? `the folder ${folder}` : 'no store'}.`,
      'Give the S3 URL (http(s)://host:port/bucket/prefix) with the credentials file, or leave the credentials file out.',
    );
  }
  let store: BackupStore;
  if (s3Url) {
    const location = parseS3Url(s3Url);
    const credentials = s3CredentialsFile ? await readS3CredentialsFile(s3CredentialsFile, env) : s3CredentialsFromEnv(env);
    store = new S3BackupStore({ location, credentials, partSizeBytes: options.s3PartSizeBytes, egress: options.egress });
  } else if (folder) {
    store = await FolderBackupStore.open(folder);
  } else {
    throw new BackupStoreError(
      'No backup store was given: neither a folder nor an S3 URL.',
      'Give a backup folder (by default the data folder’s path followed by -backups) or an S3 URL.',
    );
  }
  if (!keyFile) return store;
  try {
    return new EncryptedBackupStore(store, await loadBackupKey(keyFile));
  } catch (e) {
    store.close?.();
    throw e;
  }
}
