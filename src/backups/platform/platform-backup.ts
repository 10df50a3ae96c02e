import type { DiskReserve } from '../../core/disk-reserve.js';
import { createReadStream } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { isAppId } from '../../core/names.js';
import { runChecked } from '../../executor/run-captured.js';
import type { Store } from '../../store/store.js';
import type { AddonBackups } from '../addon-backups.js';
import { secretsKeyPath } from '../../store/secrets-key-file.js';
import type { BackupStore } from '../store/backup-store.js';
import { type BackupKey, EncryptedBackupStore, loadBackupKey } from '../store/encrypted-store.js';
import { FolderBackupStore } from '../store/folder-store.js';
import { BASE_PREFIX } from '../postgresql/postgresql-backups.js';
import { WAL_PREFIX } from '../postgresql/wal-shipper.js';
import { checksumTree, copyPlatformFiles, syncPath } from './files.js';
import {
  backupName,
  backupsBeyond,
  leftoverTemporaries,
  MANIFEST_FILE,
  PLATFORM_BACKUP_FORMAT,
  temporaryName,
  type ManifestAddon,
  type PlatformManifest,
} from './manifest.js';
import { ADDONS_FOLDER, DATA_FOLDER_FILES, PG_PASSWORD_FILE, REPOS_FOLDER, SECRETS_KEY_FILE, STORE_FILE } from './layout.js';

export interface PlatformBackupSources {
  dataDir: string;
  store: Store;
  /** The add-ons' backups: a fresh one of each is taken and restore-tested first. */
  backups: AddonBackups | undefined;
  /** Where the add-ons' backups are kept (their objects are copied from there). */
  backupStore: BackupStore | undefined;
  version: string;
  log(line: string): void;
  /** The free space backups leave on the data folder's disk (and the backup folder's); absent: not checked. */
  reserve?: DiskReserve;
  /** The backup key file (`--backup-key-file`): the platform backup is encrypted with it; absent: written in clear, and said so. */
  keyFile?: string;
}

export interface PlatformBackupReport {
  path: string;
  manifest: PlatformManifest;
  /** Older backups removed to keep the number asked for. */
  removed: string[];
  /** Set when the backup is written in clear: what it exposes and how to encrypt it. */
  warning?: string;
}

/** Said with every platform backup written in clear (the daemon's log, the CLI). */
export const CLEAR_BACKUP_WARNING =
  'platform backup written in clear: it holds the CA keys, the admin token and the key to the secrets of the store; ' +
  'configure --backup-key-file on the daemon (a file of 32 random bytes or more, mode 0600, kept elsewhere) to encrypt it';

/** Git reads the pushed repositories as root: no system or global configuration of the host. */
const GIT_ENV = { PATH: '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: '/nonexistent', LC_ALL: 'C' };

/**
 * Writes one whole-platform backup into `to` (created if missing, root's alone): the add-ons'
 * fresh verified backups, then the store through SQLite's online backup (so it lists them),
 * a git bundle of each repository, the internal CA, the SSH host key, the admin token and the
 * store's secrets key. Everything goes into a hidden folder first, renamed to its final name
 * once whole and synced. With `keep`, the oldest complete backups beyond that number are
 * removed afterwards.
 *
 * With a backup key, every file but the manifest is encrypted (encrypted-store.ts, each bound to
 * its path): the parts are first put together in clear in a staging folder inside the data
 * folder (which holds the same data in clear already), and only their encrypted form reaches
 * the backup folder. Without one, the backup is written in clear and says so.
 */
export async function takePlatformBackup(o: PlatformBackupSources, to: string, keep?: number): Promise<PlatformBackupReport> {
  if (!isAbsolute(to)) throw new Error(`The backup folder must be an absolute path on the daemon's machine, not ${JSON.stringify(to)}.`);
  await o.reserve?.check('platform backup', [{ label: 'platform backup folder', path: to }]);
  await mkdir(to, { recursive: true, mode: 0o700 });
  const folderInfo = await lstat(to);
  if (!folderInfo.isDirectory()) throw new Error(`${to} is not a folder.`);
  for (const leftover of leftoverTemporaries(await readdir(to))) await rm(join(to, leftover), { recursive: true, force: true });
  const key = o.keyFile ? await loadBackupKey(o.keyFile) : undefined;
  const createdAt = new Date();
  const name = backupName(createdAt);
  const tmp = join(to, temporaryName(name));
  await mkdir(tmp, { mode: 0o700 });
  const staging = join(o.dataDir, 'backup-scratch');
  if (key) {
    await mkdir(staging, { recursive: true, mode: 0o700 });
    // A staging folder a crash left (clear copies, inside the data folder) goes before the next.
    for (const left of await readdir(staging))
      if (left.startsWith('platform-')) await rm(join(staging, left), { recursive: true, force: true });
  }
  // Where the parts are put together in clear: the backup itself, or a staging folder to encrypt from.
  const work = key ? await mkdtemp(join(staging, 'platform-')) : tmp;
  try {
    const addons = await copyAddonData(o, tmp, key);
    const secretsKey = secretsKeyPath(o.dataDir);
    const keyBefore = await readFile(secretsKey).catch(() => undefined);
    await o.store.db.backup(join(work, STORE_FILE));
    const repositories = await bundleRepositories(o, work);
    for (const file of DATA_FOLDER_FILES) await copyPlatformFiles(join(o.dataDir, file), join(work, file));
    await copyPlatformFiles(secretsKey, join(work, SECRETS_KEY_FILE));
    // A rotation between the store's copy and the key's would leave a store its key cannot read.
    const keyCopied = await readFile(join(work, SECRETS_KEY_FILE)).catch(() => undefined);
    if (!keyBefore || !keyCopied?.equals(keyBefore)) {
      throw new Error('The secrets key changed while the platform backup was taken (a rotation): take the backup again.');
    }
    const postgresql = addons.postgresql;
    if (postgresql) await copyPlatformFiles(join(o.dataDir, 'postgresql', 'admin-password'), join(work, PG_PASSWORD_FILE));
    if (key) await sealInto(work, tmp, key);
    // The cluster is restored as files: the new machine needs the same PostgreSQL major version.
    const major = postgresql ? Number((await readFile(join(o.dataDir, 'postgresql', 'data', 'PG_VERSION'), 'utf8')).trim()) : 0;
    const manifest: PlatformManifest = {
      format: PLATFORM_BACKUP_FORMAT,
      slipway_version: o.version,
      created_at: createdAt.toISOString(),
      store: STORE_FILE,
      repositories,
      addons: addons.list,
      postgresql: postgresql ? { ...postgresql, admin_password_file: PG_PASSWORD_FILE, major } : null,
      secrets_key: SECRETS_KEY_FILE,
      encrypted: key ? { key_id: key.id } : null,
      files: await checksumTree(tmp),
    };
    for (const file of manifest.files) await syncPath(join(tmp, file.path));
    await writeFile(join(tmp, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
    await syncPath(join(tmp, MANIFEST_FILE));
    await syncPath(tmp);
    const path = join(to, name);
    await rename(tmp, path);
    await syncPath(to);
    const removed: string[] = [];
    if (keep !== undefined) {
      for (const old of backupsBeyond(await readdir(to), keep)) {
        await rm(join(to, old), { recursive: true, force: true });
        removed.push(old);
      }
    }
    if (!key) o.log(`${CLEAR_BACKUP_WARNING}.`);
    return { path, manifest, removed, ...(key ? {} : { warning: CLEAR_BACKUP_WARNING }) };
  } catch (error) {
    await rm(tmp, { recursive: true, force: true });
    throw error;
  } finally {
    if (work !== tmp) await rm(work, { recursive: true, force: true });
  }
}

/** Each file put together in `work`, encrypted into the backup under its path (the name its seal binds). */
async function sealInto(work: string, tmp: string, key: BackupKey): Promise<void> {
  const sealed = new EncryptedBackupStore(await FolderBackupStore.open(tmp), key);
  for (const file of await checksumTree(work)) await sealed.put(file.path, createReadStream(join(work, file.path)));
}

/**
 * A fresh restore-tested backup of each add-on, its objects copied into `addons/` as a folder
 * store (encrypted with the backup key under their own keys when there is one). For
 * PostgreSQL, the archived WAL from the base backup's start on comes along.
 */
async function copyAddonData(
  o: PlatformBackupSources,
  tmp: string,
  key: BackupKey | undefined,
): Promise<{ list: ManifestAddon[]; postgresql?: { base_key: string; restore_point: string } }> {
  if (!o.backups || !o.backupStore || o.store.addons.all().length === 0) return { list: [] };
  const taken = await o.backups.backupAllVerified();
  const folder = await FolderBackupStore.open(join(tmp, ADDONS_FOLDER));
  const copy: BackupStore = key ? new EncryptedBackupStore(folder, key) : folder;
  const source = o.backupStore;
  const keys = new Set<string>();
  const list: ManifestAddon[] = [];
  let postgresql: { base_key: string; restore_point: string } | undefined;
  for (const { addon, backup } of taken) {
    keys.add(backup.object_key);
    list.push({
      addon_id: addon.id,
      name: addon.name,
      provider: addon.provider,
      backup_id: backup.id,
      object_key: backup.object_key,
      restore_point: backup.restore_point,
    });
    if (backup.object_key.startsWith(BASE_PREFIX) && backup.restore_point) {
      // One base backup for them all; the last restore point made is the one replay goes to.
      postgresql = { base_key: backup.object_key, restore_point: backup.restore_point };
    }
  }
  if (postgresql) {
    const start = postgresql.base_key.slice(BASE_PREFIX.length, BASE_PREFIX.length + 24);
    for (const object of await source.list(WAL_PREFIX)) {
      const walName = object.key.slice(WAL_PREFIX.length);
      if (walName.endsWith('.history') || walName.slice(0, 24) >= start) keys.add(object.key);
    }
  }
  for (const key of keys) await copy.put(key, await source.get(key));
  o.log(`Platform backup: ${taken.length} add-on backup(s) restore-tested and copied (${keys.size} objects).`);
  return { list, postgresql };
}

/** `git bundle --all` of each app's repository that holds commits: one file, whatever a push does meanwhile. */
async function bundleRepositories(o: PlatformBackupSources, tmp: string): Promise<Array<{ app_id: string; file: string }>> {
  const bundled: Array<{ app_id: string; file: string }> = [];
  await mkdir(join(tmp, REPOS_FOLDER), { mode: 0o700 });
  for (const app of o.store.apps.all()) {
    if (!isAppId(app.id)) continue;
    // In the app's own filesystem (pipeline/deploy-layout.ts); a data folder not upgraded yet keeps it in repos/.
    const own = join(o.dataDir, 'apps', app.id, 'repo.git');
    const repo = (await lstat(own).catch(() => undefined)) ? own : join(o.dataDir, 'repos', `${app.id}.git`);
    const info = await lstat(repo).catch(() => undefined);
    // The repositories are slipway's own folders; anything else in their place is not followed.
    if (!info?.isDirectory()) continue;
    const refs = await runChecked(['git', '--git-dir', repo, 'for-each-ref', '--count=1', '--format=%(refname)'], {
      env: GIT_ENV,
      cwd: '/',
    });
    if (refs.stdout.trim() === '') continue;
    const file = `${REPOS_FOLDER}/${app.id}.bundle`;
    await runChecked(['git', '--git-dir', repo, 'bundle', 'create', '--quiet', join(tmp, file), '--all'], {
      env: GIT_ENV,
      cwd: '/',
      timeoutMs: 30 * 60_000,
    });
    bundled.push({ app_id: app.id, file });
  }
  return bundled;
}
