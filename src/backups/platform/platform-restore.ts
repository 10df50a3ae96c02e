import { randomBytes } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { chmod, chown, lstat, mkdir, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { basename, dirname, join } from 'node:path';
import { findPostgresBinaries } from '../../addons/postgresql/binaries.js';
import { DEFAULT_POSTGRES_USER } from '../../addons/postgresql/postgresql-provider.js';
import { ensureSystemUser } from '../../addons/system-user.js';
import { isAppId } from '../../core/names.js';
import { runChecked } from '../../executor/run-captured.js';
import { secretsKeyPath } from '../../store/secrets-key-file.js';
import { Store } from '../../store/store.js';
import { ScratchCluster } from '../postgresql/scratch-cluster.js';
import { BASE_PREFIX, serverPrefix } from '../postgresql/postgresql-backups.js';
import { DEFAULT_POSTGRESQL_UID_RANGE, POSTGRESQL_SERVER_USERS, RedisServerUsers } from '../../addons/redis/server-users.js';
import { WAL_PREFIX } from '../postgresql/wal-shipper.js';
import { FS_BUCKET } from '../../addons/fs-bucket/fs-bucket-provider.js';
import { BUCKET_PREFIX, fetchImage, memberName } from '../fs-bucket/bucket-image.js';
import type { BackupStore } from '../store/backup-store.js';
import { type BackupKey, EncryptedBackupStore, loadBackupKey } from '../store/encrypted-store.js';
import { FolderBackupStore } from '../store/folder-store.js';
import { openBackupStore, type BackupStoreOptions } from '../store/open-store.js';
import { checkFiles } from './files.js';
import { completeBackupNames, type PlatformBackupPlace, STORE_PREFIX } from './backup-place.js';
import {
  completeBackups,
  describeManifest,
  MANIFEST_FILE,
  namesStoredBackup,
  NEWEST_IN_STORE,
  parseManifest,
  type ManifestServer,
  type PlatformManifest,
} from './manifest.js';
import { ADDONS_FOLDER, DATA_FOLDER_FILES, REPOS_FOLDER, STORE_FILE } from './layout.js';

/** What the daemon does once it runs on the restored data folder. */
export interface RestoredPlatform {
  /** Apps whose release served when the backup was taken: built again from the commit it came from. */
  rebuild: Array<{ appId: string; commit: string }>;
  /** Redis add-ons: their snapshot is loaded through the add-on restore once their servers run. */
  redis: Array<{ addonId: string; backupId: string }>;
  /**
   * Kept releases, as clear tar archives in `<data>/restored-releases/` (root's alone): unpacked
   * into each app's releases folder, as the app's user, once its filesystem and user exist.
   */
  releases: Array<{ appId: string; deploymentId: string; archive: string }>;
}

/** Where a restore leaves the release archives for the daemon to unpack (root's alone, removed once done). */
export const RESTORED_RELEASES_FOLDER = 'restored-releases';

const GIT_ENV = { PATH: '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: '/nonexistent', LC_ALL: 'C' };

/**
 * A restore goes onto an empty data folder only (one that does not exist yet, or holds
 * nothing): it never mixes two platforms, and a refusal touches nothing.
 */
export async function assertEmptyDataFolder(dataDir: string): Promise<void> {
  const info = await lstat(dataDir).catch(() => undefined);
  if (!info) return;
  if (!info.isDirectory()) throw new Error(`--restore-from needs an empty data folder, and ${dataDir} is not a folder.`);
  const entries = await readdir(dataDir);
  if (entries.length > 0) {
    throw new Error(
      `--restore-from needs an empty data folder, and ${dataDir} holds ${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}; nothing was changed. ` +
        'Give another --data-dir, or start without --restore-from to use the platform already there.',
    );
  }
}

/** The backup to restore: `from` itself when it holds a manifest, else the newest complete backup inside it. */
export async function locateBackup(from: string): Promise<string> {
  const info = await lstat(from).catch(() => undefined);
  if (!info?.isDirectory()) throw new Error(`There is no folder ${from} to restore from.`);
  if (await lstat(join(from, MANIFEST_FILE)).catch(() => undefined)) return from;
  // A backup is whole once its manifest is written (the last of its files).
  for (const name of completeBackups(await readdir(from))) {
    if (await lstat(join(from, name, MANIFEST_FILE)).catch(() => undefined)) return join(from, name);
  }
  throw new Error(`${from} holds no platform backup (a slipway-platform-<time> folder with a manifest.json).`);
}

/** A platform backup found and checked: every file its manifest lists is there with its checksum. */
export interface CheckedBackup {
  folder: string;
  /** The folder holding the backups, where the release archives are (`releases/`). */
  root: string;
  manifest: PlatformManifest;
  /** The backup key an encrypted backup was written with; undefined for one in clear. */
  key?: BackupKey;
  /** Removes the copy a backup of an S3 store was downloaded to (nothing for a folder). */
  cleanup(): Promise<void>;
}

/**
 * Finds the backup, reads its manifest and checks every file and release archive against it:
 * run before anything is written to the data folder, so a damaged backup changes nothing.
 * `from` is a folder (`locateBackup`), or, with `namesStoredBackup`, `latest` or a backup's name
 * in the configured backup store: a folder store is read in place, an S3 store's backup is
 * downloaded first into a folder beside the data folder (removed by `cleanup`).
 */
export async function checkPlatformBackup(
  from: string,
  o: { keyFile?: string; backupStore?: BackupStoreOptions; dataDir?: string } = {},
): Promise<CheckedBackup> {
  const located = namesStoredBackup(from) ? await fetchStoredBackup(from, o) : await inFolder(from);
  try {
    const manifest = parseManifest(await readFile(join(located.folder, MANIFEST_FILE), 'utf8'));
    // An encrypted backup needs its key: refused here, before anything is written, without it.
    const key = await backupKeyFor(manifest, o.keyFile);
    await checkFiles(located.folder, manifest.files);
    await checkFiles(
      located.root,
      (manifest.releases ?? []).map((r) => ({ path: r.object, size_bytes: r.size_bytes, sha256: r.sha256 })),
    );
    return { ...located, manifest, key };
  } catch (error) {
    await located.cleanup();
    throw error;
  }
}

async function inFolder(from: string): Promise<Omit<CheckedBackup, 'manifest' | 'key'>> {
  const folder = await locateBackup(from);
  return { folder, root: dirname(folder), cleanup: async () => undefined };
}

/** A backup of the configured store: found by name (or the newest), read in place or downloaded. */
async function fetchStoredBackup(
  from: string,
  o: { backupStore?: BackupStoreOptions; dataDir?: string },
): Promise<Omit<CheckedBackup, 'manifest' | 'key'>> {
  if (!o.backupStore || !o.dataDir) throw new Error(`${from} names a backup of the backup store, and none is configured.`);
  // The objects as stored: each backup's files are sealed under their own paths.
  const raw = await openBackupStore({ ...o.backupStore, keyFile: undefined });
  try {
    const place: PlatformBackupPlace = {
      raw,
      prefix: STORE_PREFIX,
      folder: o.backupStore.folder && join(o.backupStore.folder, STORE_PREFIX),
      describe: () => raw.describe(),
    };
    const names = await completeBackupNames(place);
    const name = from === NEWEST_IN_STORE ? names[0] : names.find((n) => n === from);
    if (!name) {
      const held = names.length
        ? `it holds ${names.slice(0, 5).join(', ')}${names.length > 5 ? ', …' : ''}`
        : 'it holds no platform backup';
      throw new Error(
        `${from === NEWEST_IN_STORE ? 'There is no platform backup' : `There is no platform backup ${from}`} in ${raw.describe()} (${held}). ` +
          'Give the backup store the backups were written to (--backup-folder, or --backup-s3-url with its credentials), or a backup folder.',
      );
    }
    if (place.folder) return { folder: join(place.folder, name), root: place.folder, cleanup: async () => undefined };
    const copy = join(dirname(o.dataDir), `.${basename(o.dataDir)}.restore-${randomBytes(4).toString('hex')}`);
    const cleanup = () => rm(copy, { recursive: true, force: true });
    try {
      await mkdir(copy, { mode: 0o700 });
      const download = async (key: string) => {
        const dest = join(copy, key);
        await mkdir(dirname(dest), { recursive: true, mode: 0o700 });
        await pipeline(await raw.get(STORE_PREFIX + key), createWriteStream(dest, { flags: 'wx', mode: 0o600 }));
      };
      for (const object of await raw.list(`${STORE_PREFIX}${name}/`)) await download(object.key.slice(STORE_PREFIX.length));
      const manifest = parseManifest(await readFile(join(copy, name, MANIFEST_FILE), 'utf8'));
      for (const release of manifest.releases ?? []) await download(release.object);
      return { folder: join(copy, name), root: copy, cleanup };
    } catch (error) {
      await cleanup();
      throw error;
    }
  } finally {
    raw.close?.();
  }
}

/**
 * Lays a checked platform backup out in an empty data folder before the daemon starts on it: the
 * store,
 * the CA, the SSH host key and the admin token, the repositories, the add-ons' backups into
 * this machine's backup store, and the PostgreSQL cluster restored from its base backup and
 * WAL to the backup's restore point. The apps' releases are build output and are not in the
 * backup: the daemon builds each app's serving commit again (`rebuild`).
 */
export async function restorePlatform(o: {
  backup: CheckedBackup;
  dataDir: string;
  backupStore: BackupStoreOptions;
  log(line: string): void;
}): Promise<RestoredPlatform> {
  const { folder, manifest, key } = o.backup;
  o.log(
    `Restoring the platform backup ${folder} of ${manifest.created_at} (slipway ${manifest.slipway_version}): ${describeManifest(manifest)}.`,
  );
  const parts = new BackupParts(folder, manifest, key);

  await parts.extract(manifest.store, join(o.dataDir, STORE_FILE));
  for (const file of DATA_FOLDER_FILES) await parts.extractTree(file, join(o.dataDir, file));
  if (manifest.secrets_key) await restoreSecretsKey(await parts.read(manifest.secrets_key), secretsKeyPath(o.dataDir));
  await restoreRepositories(parts, manifest, o.dataDir);

  const folderObjects = await FolderBackupStore.open(join(folder, ADDONS_FOLDER));
  const objects: BackupStore = key ? new EncryptedBackupStore(folderObjects, key) : folderObjects;
  let present = new Set<string>();
  if (manifest.addons.length > 0) {
    const target = await openBackupStore(o.backupStore);
    try {
      for (const object of await objects.list('')) await target.put(object.key, await objects.get(object.key));
      present = new Set((await target.list('')).map((object) => object.key));
      o.log(`Copied the add-ons' backups to ${target.describe()}.`);
    } finally {
      target.close?.();
    }
  }
  if (manifest.postgresql) {
    const password = (await parts.read(manifest.postgresql.admin_password_file)).toString('utf8').trim();
    await restoreCluster(objects, manifest.postgresql, password, o.dataDir);
    o.log('Restored the PostgreSQL add-ons from their base backup and archived WAL.');
  }
  for (const server of manifest.postgresql_servers ?? []) {
    const password = (await parts.read(server.admin_password_file)).toString('utf8').trim();
    await restoreAddonServer(objects, server, password, o.dataDir);
  }
  if (manifest.postgresql_servers?.length) {
    o.log(`Restored ${manifest.postgresql_servers.length} PostgreSQL add-on server(s) from their base backups and archived WAL.`);
  }
  const buckets = manifest.addons.filter((a) => a.provider === FS_BUCKET);
  for (const bucket of buckets) await placeBucketImage(objects, bucket.object_key, bucket.addon_id, o.dataDir);
  if (buckets.length) o.log(`Restored the images of ${buckets.length} FS bucket(s): they are mounted at the start.`);
  const releases = await stageReleases(o.backup, o.dataDir);
  if (releases.length) o.log(`Restored ${releases.length} kept release(s): they are unpacked into the apps' folders at the start.`);
  const { rebuild, forgotten } = settleStore(join(o.dataDir, STORE_FILE), present, releases, o.dataDir);
  if (forgotten > 0) o.log(`${forgotten} older add-on backup(s) are not in this machine's backup store and were taken off the lists.`);
  return {
    rebuild,
    redis: manifest.addons.filter((a) => a.provider === 'redis').map((a) => ({ addonId: a.addon_id, backupId: a.backup_id })),
    releases,
  };
}

/**
 * An FS bucket's image from its backup, where the bucket provider mounts it at the start
 * (`<data>/fs-buckets/<add-on id>.img`, root's alone). Its object was checked against the
 * manifest with every other file; the image's own SHA-256 was compared when the backup was
 * restore-tested, before the platform backup went on.
 */
async function placeBucketImage(objects: BackupStore, key: string, addonId: string, dataDir: string): Promise<void> {
  if (!key.startsWith(BUCKET_PREFIX)) throw new Error(`${key} is not an FS bucket image.`);
  const folder = join(dataDir, 'fs-buckets');
  await mkdir(folder, { recursive: true, mode: 0o711 });
  const image = await fetchImage(objects, key, folder, memberName(addonId));
  await chmod(image, 0o600);
}

/** Each release archive, decrypted when sealed, into `<data>/restored-releases/<app>/<deployment>.tar`. */
async function stageReleases(backup: CheckedBackup, dataDir: string): Promise<RestoredPlatform['releases']> {
  const list = backup.manifest.releases ?? [];
  if (list.length === 0) return [];
  const root = await FolderBackupStore.open(backup.root);
  const archives: BackupStore = backup.key ? new EncryptedBackupStore(root, backup.key) : root;
  const staged: RestoredPlatform['releases'] = [];
  for (const release of list) {
    if (!isAppId(release.app_id))
      throw new Error(`The manifest names a release of ${JSON.stringify(release.app_id)}, which is not an app id.`);
    const archive = join(dataDir, RESTORED_RELEASES_FOLDER, release.app_id, `${release.deployment_id}.tar`);
    await mkdir(dirname(archive), { recursive: true, mode: 0o700 });
    await pipeline(await archives.get(release.object), createWriteStream(archive, { flags: 'wx', mode: 0o600 }));
    staged.push({ appId: release.app_id, deploymentId: release.deployment_id, archive });
  }
  return staged;
}

/**
 * The files of a backup as they were before it was written: read as they are, or decrypted with
 * the backup key (each bound to its path inside the backup) when the backup is encrypted.
 */
class BackupParts {
  private sealed: Promise<BackupStore> | undefined;

  constructor(
    readonly folder: string,
    private readonly manifest: PlatformManifest,
    readonly key: BackupKey | undefined,
  ) {}

  private async open(path: string): Promise<Readable> {
    // The backup's own files: a link in their place is not followed.
    if (!this.key) return (await open(join(this.folder, path), constants.O_RDONLY | constants.O_NOFOLLOW)).createReadStream();
    this.sealed ??= FolderBackupStore.open(this.folder).then((store) => new EncryptedBackupStore(store, this.key!));
    return (await this.sealed).get(path);
  }

  async read(path: string): Promise<Buffer> {
    return buffer(await this.open(path));
  }

  /**
   * Writes one file, never over an existing one: root's alone, but for certificates and public
   * keys (`.pem`, `.pub`), which were written readable (an encrypted backup keeps no modes).
   */
  async extract(path: string, dest: string): Promise<void> {
    const mode = /\.(pem|pub)$/.test(path) ? 0o644 : 0o600;
    await pipeline(await this.open(path), createWriteStream(dest, { flags: 'wx', mode }));
  }

  /** A file, or every listed file under a folder of that name; absent ones are skipped. */
  async extractTree(top: string, dest: string): Promise<void> {
    for (const file of this.manifest.files) {
      if (file.path !== top && !file.path.startsWith(`${top}/`)) continue;
      const target = join(dest, file.path.slice(top.length));
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      await this.extract(file.path, target);
    }
  }
}

/** The backup key an encrypted backup needs, checked before anything is written; undefined for one in clear. */
async function backupKeyFor(manifest: PlatformManifest, keyFile: string | undefined): Promise<BackupKey | undefined> {
  if (!manifest.encrypted) return undefined;
  if (!keyFile) {
    throw new Error(
      `This platform backup is encrypted (key id ${manifest.encrypted.key_id}): give the key file it was written with (--backup-key-file).`,
    );
  }
  const key = await loadBackupKey(keyFile);
  if (key.id !== manifest.encrypted.key_id) {
    throw new Error(
      `This platform backup was encrypted with another key (key id ${manifest.encrypted.key_id}), not the one in ${keyFile} (key id ${key.id}).`,
    );
  }
  return key;
}

/** The store's secrets key, beside the new data folder; one already there must be the same key. */
async function restoreSecretsKey(key: Buffer, file: string): Promise<void> {
  const present = await readFile(file).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
  if (present) {
    if (present.equals(key)) return;
    throw new Error(
      `A secrets key file ${file} is already there, and it is not the backup's: the restored store could not be read with it. Move it away first.`,
    );
  }
  await writeFile(file, key, { mode: 0o600, flag: 'wx' });
}

/** Each bundle fetched into a new bare repository where the daemon keeps it; the hooks come with the next push. */
async function restoreRepositories(parts: BackupParts, manifest: PlatformManifest, dataDir: string): Promise<void> {
  const repos = join(dataDir, REPOS_FOLDER);
  await mkdir(repos, { recursive: true, mode: 0o700 });
  for (const { app_id: appId, file } of manifest.repositories) {
    if (!isAppId(appId)) throw new Error(`The manifest names a repository of ${JSON.stringify(appId)}, which is not an app id.`);
    const repo = join(repos, `${appId}.git`);
    // An encrypted bundle is decrypted beside the repositories (root's alone) for git to read.
    const bundle = parts.key ? join(repos, `${appId}.bundle`) : join(parts.folder, file);
    if (parts.key) await parts.extract(file, bundle);
    try {
      await runChecked(['git', 'init', '--quiet', '--bare', '--template=', '--initial-branch=master', repo], { env: GIT_ENV, cwd: '/' });
      await runChecked(['git', '--git-dir', repo, 'fetch', '--quiet', '--update-head-ok', bundle, '+refs/*:refs/*'], {
        env: GIT_ENV,
        cwd: '/',
        timeoutMs: 30 * 60_000,
      });
    } finally {
      if (parts.key) await rm(bundle, { force: true });
    }
  }
}

/**
 * The embedded cluster as a whole: restored into a throw-away copy (no network) that replays
 * the archived WAL to the restore point and is promoted, shut down cleanly, then moved to where
 * the add-on server starts from, with the superuser password its roles have.
 */
async function restoreCluster(
  objects: BackupStore,
  pg: NonNullable<PlatformManifest['postgresql']>,
  password: string,
  dataDir: string,
): Promise<void> {
  if (!pg.base_key.startsWith(BASE_PREFIX)) throw new Error(`${pg.base_key} is not a PostgreSQL base backup.`);
  const user = await ensureSystemUser(DEFAULT_POSTGRES_USER);
  const binaries = await findPostgresBinaries(pg.major);
  const start = pg.base_key.slice(BASE_PREFIX.length, BASE_PREFIX.length + 24);
  const walNames = (await objects.list(WAL_PREFIX))
    .map((object) => object.key.slice(WAL_PREFIX.length))
    .filter((name) => name.endsWith('.history') || name.slice(0, 24) >= start);
  const root = join(dataDir, 'postgresql');
  await mkdir(root, { mode: 0o755 });
  const copy = await ScratchCluster.restore({
    scratchRoot: join(dataDir, 'backup-scratch'),
    user,
    binDir: dirname(binaries.postgres),
    store: objects,
    baseKey: pg.base_key,
    walNames,
    target: { name: pg.restore_point },
    adminPassword: password,
  });
  await copy.handOver(join(root, 'data'));
  await writeFile(join(root, 'admin-password'), `${password}\n`, { mode: 0o600, flag: 'wx' });
}

/**
 * One add-on's own server: restored as its own account (made here when missing) into a
 * throw-away copy that replays its archive to the backup's restore point, then moved to where
 * the server starts from, with its superuser's password.
 */
async function restoreAddonServer(objects: BackupStore, server: ManifestServer, password: string, dataDir: string): Promise<void> {
  const prefix = serverPrefix(server.addon_id);
  const base = `${prefix}base/`;
  const walPrefix = `${prefix}wal/`;
  const user = await new RedisServerUsers(DEFAULT_POSTGRESQL_UID_RANGE, POSTGRESQL_SERVER_USERS).ensure(server.addon_id);
  const binaries = await findPostgresBinaries(server.major);
  const start = server.base_key.slice(base.length, base.length + 24);
  const walNames = (await objects.list(walPrefix))
    .map((object) => object.key.slice(walPrefix.length))
    .filter((name) => name.endsWith('.history') || name.slice(0, 24) >= start);
  const root = join(dataDir, 'postgresql', server.addon_id);
  await mkdir(join(dataDir, 'postgresql'), { mode: 0o755, recursive: true });
  await mkdir(root, { mode: 0o750 });
  await chown(root, 0, user.gid);
  const copy = await ScratchCluster.restore({
    scratchRoot: join(dataDir, 'backup-scratch'),
    user,
    binDir: dirname(binaries.postgres),
    store: objects,
    baseKey: server.base_key,
    walNames,
    walPrefix,
    target: { name: server.restore_point },
    adminPassword: password,
  });
  await copy.handOver(join(root, 'data'));
  await writeFile(join(root, 'admin-password'), `${password}\n`, { mode: 0o600, flag: 'wx' });
}

/**
 * The restored store made true of this machine. The records of the releases that came back name
 * their folder in this data folder (`<data>/apps/<app>/releases/<deployment>`), where the daemon
 * unpacks them: a serving one is started again as it was, without a rebuild, and a rollback
 * goes to any of them. A release that served and did not come back (a backup of format 1 or 2)
 * is marked stopped and returned with the commit it was built from, for the daemon to build
 * again once it runs. Add-on backups whose object is not in this machine's backup store (older
 * ones, when it is not the old machine's store) are taken off the lists: every backup listed
 * can be restored.
 */
function settleStore(
  storeFile: string,
  presentKeys: ReadonlySet<string>,
  releases: RestoredPlatform['releases'],
  dataDir: string,
): { rebuild: Array<{ appId: string; commit: string }>; forgotten: number } {
  const store = Store.open(storeFile);
  try {
    let forgotten = 0;
    for (const backup of store.addonBackups.all()) {
      if (presentKeys.has(backup.object_key)) continue;
      store.addonBackups.delete(backup.id);
      forgotten++;
    }
    const back = new Set(releases.map((r) => `${r.appId}/${r.deploymentId}`));
    // The folder a release record names, here; undefined when that release did not come back.
    // What CC_PRE_RUN_HOOK wrote is kept beside the release, not in the backup: the record drops
    // it, a rollback runs the hook again, and a serving release that had one is built again.
    const placed = (appId: string, json: string): { json: string; dir: string; preRun: boolean } | undefined => {
      const { preRunLayer, ...spec } = JSON.parse(json) as { releaseDir?: unknown; preRunLayer?: unknown };
      if (typeof spec.releaseDir !== 'string') return undefined;
      const folder = basename(spec.releaseDir);
      if (!back.has(`${appId}/${folder}`)) return undefined;
      const dir = join(dataDir, 'apps', appId, 'releases', folder);
      return { json: JSON.stringify({ ...spec, releaseDir: dir }), dir, preRun: preRunLayer !== undefined };
    };
    for (const app of store.apps.all()) {
      for (const deployment of store.deployments.withReleases(app.id, 10_000)) {
        const moved = placed(app.id, deployment.release_json!);
        if (moved) store.deployments.setReleaseJson(deployment.id, moved.json);
      }
    }
    const rebuild: Array<{ appId: string; commit: string }> = [];
    for (const release of store.deployments.allReleases()) {
      const moved = placed(release.app_id, release.start_json);
      if (moved) store.deployments.setRelease({ ...release, release_dir: moved.dir, start_json: moved.json });
      if (moved && !moved.preRun) continue;
      if (release.wanted !== 'running') continue;
      const deployment = store.deployments.byId(release.deployment_id);
      if (deployment) rebuild.push({ appId: release.app_id, commit: deployment.commit_sha });
      store.deployments.setWanted(release.app_id, 'stopped');
    }
    return { rebuild, forgotten };
  } finally {
    store.close();
  }
}
