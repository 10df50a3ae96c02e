/**
 * The layout of a whole-platform backup and its manifest, as pure functions: a backup is a
 * folder `slipway-platform-<UTC time>` inside the folder the operator chose, written under a
 * hidden temporary name and renamed once whole, so a folder with the final name is always a
 * complete backup. `manifest.json` names every file with its size and SHA-256.
 */

export const MANIFEST_FILE = 'manifest.json';
/**
 * 3: the apps' kept releases are in it (`releases`), each an archive shared by the backups of the
 * same place that hold it. 2: the store's secrets key is in the backup, and every file but the
 * manifest may be encrypted (`encrypted`). Formats 1 and 2 (no releases: the serving commit is
 * built again) are still restored.
 */
export const PLATFORM_BACKUP_FORMAT = 3;
const READABLE_FORMATS = [1, 2, 3];

const NAME = /^slipway-platform-(\d{8}T\d{6}Z)$/;

/** Files in a backup are relative paths of plain parts: no `..`, no `.`, nothing absolute. */
const PART = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

export interface ManifestFile {
  path: string;
  size_bytes: number;
  sha256: string;
}

/** One add-on's data in the backup: its latest verified backup, whose objects are under `addons/`. */
export interface ManifestAddon {
  addon_id: string;
  name: string;
  provider: string;
  backup_id: string;
  object_key: string;
  /** PostgreSQL: the restore point this backup's counts were taken at. */
  restore_point: string | null;
}

/**
 * One kept release of an app (format 3): its folder as a tar archive, stored beside the backups
 * (`releases/<app id>/<deployment id>[-<key id>].tar`, relative to the folder or store prefix
 * holding the backups) so that the next backup of the same place holding it shares it.
 */
export interface ManifestRelease {
  app_id: string;
  /** The deployment that built it: the name of its folder. */
  deployment_id: string;
  /** The archive, relative to where the backups are kept (not to the backup itself). */
  object: string;
  /** Of the archive as stored (encrypted when the backup is). */
  size_bytes: number;
  sha256: string;
}

export interface ManifestServer {
  addon_id: string;
  base_key: string;
  restore_point: string;
  admin_password_file: string;
  major: number;
}

export interface PlatformManifest {
  format: number;
  slipway_version: string;
  created_at: string;
  /** The store (SQLite, from its online backup). */
  store: string;
  /** One git bundle per app repository holding commits. */
  repositories: Array<{ app_id: string; file: string }>;
  addons: ManifestAddon[];
  /** The PostgreSQL cluster as a whole: the base backup and restore point its restore replays to. */
  postgresql: { base_key: string; restore_point: string; admin_password_file: string; major: number } | null;
  /** Each add-on's own PostgreSQL server: its base backup, the restore point replay goes to, its superuser's password. */
  postgresql_servers?: ManifestServer[];
  /** The key the store's secrets are sealed with (format 2; absent from format 1, whose store holds them in clear). */
  secrets_key?: string | null;
  /**
   * Format 2: set when every file of the backup (not the manifest) is encrypted with the backup
   * key (the add-ons' objects under their keys, the other files under their paths), else null.
   * `files` then gives the encrypted files' sizes and checksums.
   */
  encrypted?: { key_id: string } | null;
  files: ManifestFile[];
  /** Format 3: the apps' kept releases (absent before: the serving commit was built again). */
  releases?: ManifestRelease[];
}

/** `slipway-platform-20261126T181500Z`: sorts by time, says what it is. */
export function backupName(at: Date): string {
  const stamp = at
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
  return `slipway-platform-${stamp}`;
}

/** The hidden name a backup is written under until it is whole. */
export function temporaryName(name: string): string {
  return `.${name}.partial`;
}

export function isBackupName(name: string): boolean {
  return NAME.test(name);
}

/** `--restore-from latest`: the newest platform backup of the configured backup store. */
export const NEWEST_IN_STORE = 'latest';

/**
 * Whether `--restore-from` names a backup of the configured backup store (`latest`, or a name
 * such as slipway-platform-20261126T181500Z) rather than a folder (a path: `./slipway-platform-…`).
 */
export function namesStoredBackup(from: string): boolean {
  return from === NEWEST_IN_STORE || isBackupName(from);
}

/** The complete backups among a folder's entries, newest first (temporary ones are never among them). */
export function completeBackups(entries: readonly string[]): string[] {
  return entries.filter(isBackupName).sort().reverse();
}

/** The complete backups to remove so that `keep` remain, oldest first. */
export function backupsBeyond(entries: readonly string[], keep: number): string[] {
  return completeBackups(entries).slice(keep).reverse();
}

/** Temporary folders a crashed backup left: removed before the next one is written. */
export function leftoverTemporaries(entries: readonly string[]): string[] {
  return entries.filter((e) => e.startsWith('.slipway-platform-') && e.endsWith('.partial'));
}

export function assertBackupPath(path: string): void {
  if (path.length === 0 || !path.split('/').every((part) => PART.test(part))) {
    throw new Error(`The manifest names a file outside the backup (${JSON.stringify(path)}).`);
  }
}

/**
 * Reads a manifest, refusing anything it would be unsafe or meaningless to restore: another
 * format, a file path leaving the backup, a missing field.
 */
export function parseManifest(text: string): PlatformManifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('manifest.json is not JSON: the backup is damaged.');
  }
  const m = value as Partial<PlatformManifest>;
  if (typeof m !== 'object' || m === null) throw new Error('manifest.json holds no manifest.');
  if (!READABLE_FORMATS.includes(m.format as number)) {
    throw new Error(`This backup has format ${String(m.format)}; this slipway reads formats ${READABLE_FORMATS.join(' and ')}.`);
  }
  if (m.encrypted != null && (typeof m.encrypted.key_id !== 'string' || !/^[0-9a-f]{16}$/.test(m.encrypted.key_id))) {
    throw new Error('manifest.json names an encryption key without its id.');
  }
  if (typeof m.created_at !== 'string' || typeof m.slipway_version !== 'string' || typeof m.store !== 'string') {
    throw new Error('manifest.json lacks its time, version or store.');
  }
  if (!Array.isArray(m.files) || !Array.isArray(m.repositories) || !Array.isArray(m.addons)) {
    throw new Error('manifest.json lacks its lists of files, repositories or add-ons.');
  }
  const listed = new Set<string>();
  for (const file of m.files) {
    assertBackupPath(file.path);
    if (!Number.isInteger(file.size_bytes) || !/^[0-9a-f]{64}$/.test(file.sha256)) {
      throw new Error(`manifest.json has no size or checksum for ${file.path}.`);
    }
    listed.add(file.path);
  }
  if (m.postgresql && !Number.isInteger(m.postgresql.major)) throw new Error('manifest.json lacks the PostgreSQL major version.');
  const named = [m.store, ...m.repositories.map((r) => r.file)];
  if (m.postgresql) named.push(m.postgresql.admin_password_file);
  if (m.postgresql_servers !== undefined) {
    if (!Array.isArray(m.postgresql_servers)) throw new Error('manifest.json lists its PostgreSQL servers wrongly.');
    for (const server of m.postgresql_servers) {
      if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(server.addon_id) || !server.base_key.startsWith(`postgresql/${server.addon_id}/base/`)) {
        throw new Error('manifest.json names a PostgreSQL server that is not an add-on of its own.');
      }
      if (!Number.isInteger(server.major)) throw new Error('manifest.json lacks the PostgreSQL major version of a server.');
      named.push(server.admin_password_file);
    }
  }
  if (m.secrets_key) named.push(m.secrets_key);
  for (const path of named) {
    if (!listed.has(path)) throw new Error(`manifest.json names ${path} but gives no checksum for it.`);
  }
  if (m.releases !== undefined) {
    if (!Array.isArray(m.releases)) throw new Error('manifest.json lists its releases wrongly.');
    for (const r of m.releases) {
      if (
        !RELEASE_ID.test(r.app_id) ||
        !RELEASE_ID.test(r.deployment_id) ||
        r.object !== releaseObject(r.app_id, r.deployment_id, m.encrypted?.key_id)
      ) {
        throw new Error(`manifest.json names a release archive it would not have made (${JSON.stringify(r.object)}).`);
      }
      if (!Number.isInteger(r.size_bytes) || !/^[0-9a-f]{64}$/.test(r.sha256)) {
        throw new Error(`manifest.json has no size or checksum for ${r.object}.`);
      }
    }
  }
  return m as PlatformManifest;
}

/** App and deployment ids as the platform makes them: the parts of a release archive's name. */
const RELEASE_ID = /^[a-z0-9][a-z0-9_-]*$/;

/**
 * Where a release's archive is kept, relative to the place holding the backups: named by the
 * deployment that built it (a release never changes) and by the key it is encrypted with, so
 * backups of one place with the same key share it and a backup with another key never replaces it.
 */
export function releaseObject(appId: string, deploymentId: string, keyId: string | undefined): string {
  return `releases/${appId}/${deploymentId}${keyId ? `-${keyId}` : ''}.tar`;
}

/** What a backup holds, in a line: for the CLI and the daemon's log. */
export function describeManifest(m: PlatformManifest): string {
  const bytes = m.files.reduce((sum, f) => sum + f.size_bytes, 0);
  const releases = m.releases ?? [];
  const releaseBytes = releases.reduce((sum, r) => sum + r.size_bytes, 0);
  const addons = m.addons.map((a) => `${a.name} (${a.provider})`).join(', ') || 'none';
  return (
    `the store, ${m.repositories.length} repositor${m.repositories.length === 1 ? 'y' : 'ies'}, ` +
    `add-ons: ${addons}; ${m.files.length} files, ${bytes} bytes; ` +
    `${releases.length} kept release${releases.length === 1 ? '' : 's'}, ${releaseBytes} bytes`
  );
}

/** The time in a backup's name (UTC, to the second). */
export function backupTime(name: string): Date | undefined {
  const stamp = NAME.exec(name)?.[1];
  if (!stamp) return undefined;
  const iso = `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)}Z`;
  return new Date(iso);
}

/**
 * A scheduled platform backup is due when today's `slot` has come and the folder holds no
 * complete backup made since, nor was one tried since (`lastTry`: a failure waits for the next day).
 */
export function platformBackupDue(entries: readonly string[], slot: Date, now: Date, lastTry?: Date): boolean {
  if (now < slot || (lastTry && lastTry >= slot)) return false;
  const newest = completeBackups(entries)[0];
  const made = newest ? backupTime(newest) : undefined;
  return !made || made < slot;
}
