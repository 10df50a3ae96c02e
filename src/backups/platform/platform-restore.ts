import { constants } from 'node:fs';
import { copyFile, lstat, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { findPostgresBinaries } from '../../addons/postgresql/binaries.js';
import { DEFAULT_POSTGRES_USER } from '../../addons/postgresql/postgresql-provider.js';
import { ensureSystemUser } from '../../addons/system-user.js';
import { isAppId } from '../../core/names.js';
import { runChecked } from '../../executor/run-captured.js';
import { Store } from '../../store/store.js';
import { ScratchCluster } from '../postgresql/scratch-cluster.js';
import { BASE_PREFIX } from '../postgresql/postgresql-backups.js';
import { WAL_PREFIX } from '../postgresql/wal-shipper.js';
import { FolderBackupStore } from '../store/folder-store.js';
import { openBackupStore, type BackupStoreOptions } from '../store/open-store.js';
import { checkFiles, copyPlatformFiles } from './files.js';
import { completeBackups, describeManifest, MANIFEST_FILE, parseManifest, type PlatformManifest } from './manifest.js';
import { ADDONS_FOLDER, DATA_FOLDER_FILES, REPOS_FOLDER, STORE_FILE } from './layout.js';

/** What the daemon does once it runs on the restored data folder. */
export interface RestoredPlatform {
  /** Apps whose release served when the backup was taken: built again from the commit it came from. */
  rebuild: Array<{ appId: string; commit: string }>;
  /** Redis add-ons: their snapshot is loaded through the add-on restore once their servers run. */
  redis: Array<{ addonId: string; backupId: string }>;
}

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
  const newest = completeBackups(await readdir(from))[0];
  if (!newest) throw new Error(`${from} holds no platform backup (a slipway-platform-<time> folder with a manifest.json).`);
  return join(from, newest);
}

/** A platform backup found and checked: every file its manifest lists is there with its checksum. */
export interface CheckedBackup {
  folder: string;
  manifest: PlatformManifest;
}

/**
 * Finds the backup (`locateBackup`), reads its manifest and checks every file against it: run
 * before anything is written to the data folder, so a damaged backup changes nothing.
 */
export async function checkPlatformBackup(from: string): Promise<CheckedBackup> {
  const folder = await locateBackup(from);
  const manifest = parseManifest(await readFile(join(folder, MANIFEST_FILE), 'utf8'));
  await checkFiles(folder, manifest.files);
  return { folder, manifest };
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
  const { folder, manifest } = o.backup;
  o.log(
    `Restoring the platform backup ${folder} of ${manifest.created_at} (slipway ${manifest.slipway_version}): ${describeManifest(manifest)}.`,
  );

  await copyFile(join(folder, manifest.store), join(o.dataDir, STORE_FILE), constants.COPYFILE_EXCL);
  for (const file of DATA_FOLDER_FILES) await copyPlatformFiles(join(folder, file), join(o.dataDir, file));
  await restoreRepositories(folder, manifest, o.dataDir);

  const objects = await FolderBackupStore.open(join(folder, ADDONS_FOLDER));
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
    await restoreCluster(objects, manifest.postgresql, join(folder, manifest.postgresql.admin_password_file), o.dataDir);
    o.log('Restored the PostgreSQL add-ons from their base backup and archived WAL.');
  }
  const { rebuild, forgotten } = settleStore(join(o.dataDir, STORE_FILE), present);
  if (forgotten > 0) o.log(`${forgotten} older add-on backup(s) are not in this machine's backup store and were taken off the lists.`);
  return {
    rebuild,
    redis: manifest.addons.filter((a) => a.provider === 'redis').map((a) => ({ addonId: a.addon_id, backupId: a.backup_id })),
  };
}

/** Each bundle fetched into a new bare repository where the daemon keeps it; the hooks come with the next push. */
async function restoreRepositories(folder: string, manifest: PlatformManifest, dataDir: string): Promise<void> {
  const repos = join(dataDir, REPOS_FOLDER);
  await mkdir(repos, { recursive: true, mode: 0o700 });
  for (const { app_id: appId, file } of manifest.repositories) {
    if (!isAppId(appId)) throw new Error(`The manifest names a repository of ${JSON.stringify(appId)}, which is not an app id.`);
    const repo = join(repos, `${appId}.git`);
    await runChecked(['git', 'init', '--quiet', '--bare', '--template=', '--initial-branch=master', repo], { env: GIT_ENV, cwd: '/' });
    await runChecked(['git', '--git-dir', repo, 'fetch', '--quiet', '--update-head-ok', join(folder, file), '+refs/*:refs/*'], {
      env: GIT_ENV,
      cwd: '/',
      timeoutMs: 30 * 60_000,
    });
  }
}

/**
 * The embedded cluster as a whole: restored into a throw-away copy (no network) that replays
 * the archived WAL to the restore point and is promoted, shut down cleanly, then moved to where
 * the add-on server starts from, with the superuser password its roles have.
 */
async function restoreCluster(
  objects: FolderBackupStore,
  pg: NonNullable<PlatformManifest['postgresql']>,
  passwordFile: string,
  dataDir: string,
): Promise<void> {
  if (!pg.base_key.startsWith(BASE_PREFIX)) throw new Error(`${pg.base_key} is not a PostgreSQL base backup.`);
  const password = (await readFile(passwordFile, 'utf8')).trim();
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
 * The restored store made true of this machine. The releases that served are marked stopped
 * (their build output is not here) and returned with the commit each was built from, for the
 * daemon to build again once it runs. Add-on backups whose object is not in this machine's
 * backup store (older ones, when it is not the old machine's store) are taken off the lists:
 * every backup listed can be restored.
 */
function settleStore(
  storeFile: string,
  presentKeys: ReadonlySet<string>,
): { rebuild: Array<{ appId: string; commit: string }>; forgotten: number } {
  const store = Store.open(storeFile);
  try {
    let forgotten = 0;
    for (const backup of store.addonBackups.all()) {
      if (presentKeys.has(backup.object_key)) continue;
      store.addonBackups.delete(backup.id);
      forgotten++;
    }
    const rebuild: Array<{ appId: string; commit: string }> = [];
    for (const release of store.deployments.allReleases()) {
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
