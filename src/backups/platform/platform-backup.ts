import type { DiskReserve } from '../../storage/disk-reserve.js';
import { createReadStream } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { isAppId } from '../../core/names.js';
import { runChecked } from '../../executor/run-captured.js';
import type { Store } from '../../store/store.js';
import type { AddonBackups } from '../addon-backups.js';
import { secretsKeyPath } from '../../store/secrets-key-file.js';
import type { BackupStore } from '../store/backup-store.js';
import { type BackupKey, EncryptedBackupStore, loadBackupKey } from '../store/encrypted-store.js';
import { BASE_PREFIX, serverPrefix } from '../postgresql/postgresql-backups.js';
import { WAL_PREFIX } from '../postgresql/wal-shipper.js';
import {
  completeBackupNames,
  incompleteBackupNames,
  listUnder,
  type PlatformBackupPlace,
  RecordingStore,
  removeBackupObjects,
} from './backup-place.js';
import { checksumTree, copyPlatformFiles } from './files.js';
import {
  backupName,
  backupsBeyond,
  leftoverTemporaries,
  MANIFEST_FILE,
  type ManifestFile,
  type ManifestRelease,
  parseManifest,
  PLATFORM_BACKUP_FORMAT,
  releaseObject,
  type ManifestAddon,
  type ManifestServer,
  type PlatformManifest,
} from './manifest.js';
import {
  ADDONS_FOLDER,
  DATA_FOLDER_FILES,
  PG_PASSWORD_FILE,
  PG_SERVERS_FOLDER,
  REPOS_FOLDER,
  SECRETS_KEY_FILE,
  STORE_FILE,
} from './layout.js';
import { archiveRelease } from './release-archives.js';

export interface PlatformBackupSources {
  dataDir: string;
  store: Store;
  /** The add-ons' backups: a fresh one of each is taken and restore-tested first. */
  backups: AddonBackups | undefined;
  /** Where the add-ons' backups are kept (their objects are copied from there). */
  backupStore: BackupStore | undefined;
  /**
   * The app's releases kept on disk, the serving one among them (each folder once): those a
   * rollback can go back to. Absent: no release is in the backup.
   */
  keptReleases?(appId: string): Array<{ releaseDir: string }>;
  version: string;
  log(line: string): void;
  /** The free space backups leave on the data folder's disk (and the backup folder's); absent: not checked. */
  reserve?: DiskReserve;
  /** The backup key file (`--backup-key-file`): the platform backup is encrypted with it; absent: written in clear, and said so. */
  keyFile?: string;
}

export interface PlatformBackupReport {
  /** The backup's folder when the place is a folder; else its name and the store it is in. */
  path: string;
  name: string;
  /** Where it was written (a folder, or the store with its bucket and prefix) and how (encrypted with which key, or in clear). */
  place: string;
  manifest: PlatformManifest;
  /** Release archives an earlier backup of the same place had written, shared rather than written again. */
  sharedReleases: number;
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
 * Writes one whole-platform backup into `place` (a folder, or the configured backup store): the
 * add-ons' fresh verified backups, then the store through SQLite's online backup (so it lists
 * them), a git bundle of each repository, the internal CA, the SSH host key, the admin token, the
 * store's secrets key, and each app's kept releases. The manifest is written last: a backup with
 * one is whole, and one a crash left without is removed before the next is written. With
 * `keep`, the oldest complete backups beyond that number are removed afterwards, and the release
 * archives no remaining backup names.
 *
 * The parts are first put together in clear in a staging folder inside the data folder (which
 * holds the same data in clear already). With a backup key, every object but the manifest is
 * encrypted (encrypted-store.ts, each bound to its path inside the backup, a release archive to
 * its name beside the backups); without one, the backup is written in clear and says so.
 */
export async function takePlatformBackup(
  o: PlatformBackupSources,
  place: PlatformBackupPlace,
  keep?: number,
): Promise<PlatformBackupReport> {
  await o.reserve?.check('platform backup', place.folder ? [{ label: 'platform backup folder', path: place.folder }] : []);
  if (place.folder) {
    // Written by slipway before backups were objects: temporary folders a crash left.
    for (const leftover of leftoverTemporaries(await readdir(place.folder)))
      await rm(join(place.folder, leftover), { recursive: true, force: true });
  }
  for (const leftover of await incompleteBackupNames(place)) await removeBackupObjects(place, leftover);
  const key = o.keyFile ? await loadBackupKey(o.keyFile) : undefined;
  const createdAt = new Date();
  const name = backupName(createdAt);
  const staging = join(o.dataDir, 'backup-scratch');
  await mkdir(staging, { recursive: true, mode: 0o700 });
  // A staging folder a crash left (clear copies, inside the data folder) goes before the next.
  for (const left of await readdir(staging))
    if (left.startsWith('platform-')) await rm(join(staging, left), { recursive: true, force: true });
  const work = await mkdtemp(join(staging, 'platform-'));
  const backupPrefix = `${place.prefix}${name}/`;
  const files = new RecordingStore(place.raw, backupPrefix);
  const addonObjects = new RecordingStore(place.raw, `${backupPrefix}${ADDONS_FOLDER}/`);
  try {
    const addons = await copyAddonData(o, sealedWith(addonObjects, key));
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
    const servers: ManifestServer[] = [];
    for (const server of addons.servers) {
      const file = `${PG_SERVERS_FOLDER}/${server.addon_id}.admin-password`;
      if (servers.length === 0) await mkdir(join(work, PG_SERVERS_FOLDER), { mode: 0o700 });
      await copyPlatformFiles(join(o.dataDir, 'postgresql', server.addon_id, 'admin-password'), join(work, file));
      const major = Number((await readFile(join(o.dataDir, 'postgresql', server.addon_id, 'data', 'PG_VERSION'), 'utf8')).trim());
      servers.push({ ...server, admin_password_file: file, major });
    }
    const sealed = sealedWith(files, key);
    for (const file of await checksumTree(work)) await sealed.put(file.path, createReadStream(join(work, file.path)));
    const releases = await archiveReleases(o, place, key);
    // The cluster is restored as files: the new machine needs the same PostgreSQL major version.
    const major = postgresql ? Number((await readFile(join(o.dataDir, 'postgresql', 'data', 'PG_VERSION'), 'utf8')).trim()) : 0;
    const listed: ManifestFile[] = [
      ...[...files.written].map(([path, sum]) => ({ path, ...sum })),
      ...[...addonObjects.written].map(([path, sum]) => ({ path: `${ADDONS_FOLDER}/${path}`, ...sum })),
    ].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const manifest: PlatformManifest = {
      format: PLATFORM_BACKUP_FORMAT,
      slipway_version: o.version,
      created_at: createdAt.toISOString(),
      store: STORE_FILE,
      repositories,
      addons: addons.list,
      postgresql: postgresql ? { ...postgresql, admin_password_file: PG_PASSWORD_FILE, major } : null,
      postgresql_servers: servers,
      secrets_key: SECRETS_KEY_FILE,
      encrypted: key ? { key_id: key.id } : null,
      files: listed,
      releases: releases.list,
    };
    // Last: from now on the backup is whole.
    await place.raw.put(`${backupPrefix}${MANIFEST_FILE}`, Readable.from([`${JSON.stringify(manifest, null, 2)}\n`]));
    const removed = keep === undefined ? [] : await removeBeyond(place, keep);
    if (!key) o.log(`${CLEAR_BACKUP_WARNING}.`);
    return {
      path: place.folder ? join(place.folder, name) : `${name} in ${place.describe()}`,
      name,
      place: key ? `${place.describe()}, encrypted with the key in ${key.file} (key id ${key.id})` : `${place.describe()}, in clear`,
      manifest,
      sharedReleases: releases.shared,
      removed,
      ...(key ? {} : { warning: CLEAR_BACKUP_WARNING }),
    };
  } catch (error) {
    await removeBackupObjects(place, name).catch(() => undefined);
    if (place.folder) await rm(join(place.folder, name), { recursive: true, force: true });
    throw error;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function sealedWith(store: BackupStore, key: BackupKey | undefined): BackupStore {
  return key ? new EncryptedBackupStore(store, key) : store;
}

/** The manifests of the place's complete backups, newest first; one that cannot be read is left out. */
async function manifestsOf(place: PlatformBackupPlace): Promise<Array<{ name: string; manifest: PlatformManifest }>> {
  const found: Array<{ name: string; manifest: PlatformManifest }> = [];
  for (const name of await completeBackupNames(place)) {
    try {
      found.push({ name, manifest: parseManifest(await text(await place.raw.get(`${place.prefix}${name}/${MANIFEST_FILE}`))) });
    } catch {
      // Not shared from, and its releases are kept (the retention below reads the same way).
    }
  }
  return found;
}

/**
 * Each app's kept releases as tar archives beside the backups. A release never changes once
 * built, so an archive an earlier whole backup of this place names (same key, same size in the
 * store) is named again rather than written again.
 */
async function archiveReleases(
  o: PlatformBackupSources,
  place: PlatformBackupPlace,
  key: BackupKey | undefined,
): Promise<{ list: ManifestRelease[]; shared: number }> {
  if (!o.keptReleases) return { list: [], shared: 0 };
  const earlier = new Map<string, ManifestRelease>();
  for (const { manifest } of await manifestsOf(place)) {
    if ((manifest.encrypted?.key_id ?? null) !== (key?.id ?? null)) continue;
    for (const release of manifest.releases ?? []) earlier.set(release.object, release);
  }
  const stored = new Map((await listUnder(place, 'releases/')).map((object) => [object.key, object.sizeBytes]));
  const recorded = new RecordingStore(place.raw, place.prefix);
  const sealed = sealedWith(recorded, key);
  const list: ManifestRelease[] = [];
  let shared = 0;
  for (const app of o.store.apps.all()) {
    const owner = o.store.appUsers.forApp(app.id);
    const releases = o.keptReleases(app.id);
    if (!owner) {
      if (releases.length) o.log(`Platform backup: ${app.name} has no unix user here; its releases are not in the backup.`);
      continue;
    }
    for (const { releaseDir } of releases) {
      const deploymentId = releaseDir.split('/').pop()!;
      const object = releaseObject(app.id, deploymentId, key?.id);
      const before = earlier.get(object);
      if (before && stored.get(object) === before.size_bytes) {
        list.push(before);
        shared++;
        continue;
      }
      await archiveRelease(sealed, object, releaseDir, { uid: owner.uid, gid: owner.uid });
      list.push({ app_id: app.id, deployment_id: deploymentId, object, ...recorded.written.get(object)! });
    }
  }
  o.log(`Platform backup: ${list.length} kept release(s), ${shared} shared with an earlier backup of ${place.describe()}.`);
  return { list, shared };
}

/** The complete backups beyond `keep` (oldest first), then the release archives no remaining backup names. */
async function removeBeyond(place: PlatformBackupPlace, keep: number): Promise<string[]> {
  const removed: string[] = [];
  for (const old of backupsBeyond(await completeBackupNames(place), keep)) {
    await removeBackupObjects(place, old);
    if (place.folder) await rm(join(place.folder, old), { recursive: true, force: true });
    removed.push(old);
  }
  const named = new Set<string>();
  const remaining = await completeBackupNames(place);
  const readable = await manifestsOf(place);
  // A manifest that cannot be read may name any archive: then none is removed.
  if (readable.length !== remaining.length) return removed;
  for (const { manifest } of readable) for (const release of manifest.releases ?? []) named.add(release.object);
  for (const object of await listUnder(place, 'releases/')) {
    if (!named.has(object.key)) await place.raw.delete(place.prefix + object.key);
  }
  return removed;
}

/**
 * A fresh restore-tested backup of each add-on, its objects copied into `addons/` of the backup
 * under their own keys (encrypted with the backup key, bound to those keys, when there is one). For
 * PostgreSQL, the archived WAL from the base backup's start on comes along.
 */
async function copyAddonData(
  o: PlatformBackupSources,
  copy: BackupStore,
): Promise<{
  list: ManifestAddon[];
  postgresql?: { base_key: string; restore_point: string };
  servers: Array<{ addon_id: string; base_key: string; restore_point: string }>;
}> {
  if (!o.backups || !o.backupStore || o.store.addons.all().length === 0) return { list: [], servers: [] };
  const taken = await o.backups.backupAllVerified();
  const source = o.backupStore;
  const keys = new Set<string>();
  const list: ManifestAddon[] = [];
  let postgresql: { base_key: string; restore_point: string } | undefined;
  const servers: Array<{ addon_id: string; base_key: string; restore_point: string }> = [];
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
    } else if (backup.object_key.startsWith(`${serverPrefix(addon.id)}base/`) && backup.restore_point) {
      // A server of the add-on's own: its base backup, and its archive from that backup's start.
      servers.push({ addon_id: addon.id, base_key: backup.object_key, restore_point: backup.restore_point });
      const base = `${serverPrefix(addon.id)}base/`;
      const walPrefix = `${serverPrefix(addon.id)}wal/`;
      const start = backup.object_key.slice(base.length, base.length + 24);
      for (const object of await source.list(walPrefix)) {
        const walName = object.key.slice(walPrefix.length);
        if (walName.endsWith('.history') || walName.slice(0, 24) >= start) keys.add(object.key);
      }
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
  return { list, postgresql, servers };
}

/** `git bundle --all` of each app's repository that holds commits: one file, whatever a push does meanwhile. */
async function bundleRepositories(o: PlatformBackupSources, tmp: string): Promise<Array<{ app_id: string; file: string }>> {
  const bundled: Array<{ app_id: string; file: string }> = [];
  await mkdir(join(tmp, REPOS_FOLDER), { mode: 0o700 });
  for (const app of o.store.apps.all()) {
    if (!isAppId(app.id)) continue;
    // In the app's own filesystem (storage/deploy-layout.ts); a data folder not upgraded yet keeps it in repos/.
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
