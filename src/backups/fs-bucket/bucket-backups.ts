import { randomBytes } from 'node:crypto';
import { statfsSync } from 'node:fs';
import { chmod, copyFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { BucketDisks } from '../../addons/fs-bucket/bucket-disks.js';
import { whileFrozen } from '../../addons/fs-bucket/bucket-freeze.js';
import { runCaptured, runChecked } from '../../executor/run-captured.js';
import type { AddonBackupRow } from '../../store/addon-backups.js';
import type { BackupEngine, EngineAddon, NewAddonOptions, RestoreFrom, TakenBackup } from '../engine.js';
import { describeSumCheck, type ObjectSums } from '../object-sums.js';
import type { BackupStore } from '../store/backup-store.js';
import { BUCKET_PREFIX, fetchImage, imageKey, imageSha256, memberName, storeImage } from './bucket-image.js';
import { SYSTEM_TOOL_ENV as TOOL_ENV } from '../../executor/system-tools.js';

/** The image's SHA-256 is kept in the backup row's restore point, so: `sha256:<hex>`. */
const SHA_PREFIX = 'sha256:';

/** What the backups need of the FS buckets (FsBucketProvider). */
export interface BucketImages {
  readonly disks: Pick<BucketDisks, 'folder' | 'image' | 'incoming' | 'replace' | 'mounted' | 'use'>;
  gid(addonId: string): Promise<number>;
}

export interface BucketBackupsOptions {
  buckets: BucketImages;
  store: BackupStore;
  sums: ObjectSums;
  /** Folder for the copies (root's; emptied after each use). */
  scratchRoot: string;
  log(line: string): void;
  /**
   * Starts the linked apps' instances again (hitlessly, as `slipway restart` does) once a
   * restored image is mounted, and resolves when they serve from it: the running ones hold the
   * old filesystem through their binds.
   */
  restartApps(addonId: string): Promise<void>;
}

/**
 * `e2fsck` reading the image only: `-n` opens it read-only and answers no to every question,
 * `-f` checks a filesystem marked clean too. Exit 0: clean.
 */
export function fsckArgv(image: string): string[] {
  return ['e2fsck', '-f', '-n', image];
}

/** The copy of the image made while the bucket is frozen: only the blocks written (or a reflink where the data folder's filesystem has them). */
export function copyArgv(image: string, copy: string): string[] {
  return ['cp', '--reflink=auto', '--sparse=always', '--', image, copy];
}

/**
 * Backups of FS buckets: a backup is the bucket's ext4 image, copied while the filesystem is
 * frozen (`fsfreeze`: every write waits, the journal is flushed, so the copy is one moment of
 * the bucket and a clean filesystem), then thawed at once and stored as a sparse, gzipped tar
 * with the image's SHA-256. Verifications and restores unpack it into a scratch folder, compare
 * the SHA-256 and run `e2fsck -fn` on it before anything is touched. Root reads the image as a
 * block file: no file inside a bucket is opened.
 */
export class BucketBackups implements BackupEngine {
  readonly label = 'FS bucket';
  readonly objectPrefix = BUCKET_PREFIX;
  readonly toAnySecond = false;
  readonly takesTogether = false;
  readonly dumpExtension = 'img.tar.gz';
  readonly duringRestore =
    'its instances are restarted on the restored files (hitlessly, as `slipway restart`); what the old ones write meanwhile is lost';

  constructor(private readonly o: BucketBackupsOptions) {}

  async take(items: Array<{ addon: EngineAddon; backupId: string }>): Promise<TakenBackup[]> {
    const taken: TakenBackup[] = [];
    for (const { addon, backupId } of items) {
      const disks = this.o.buckets.disks;
      if (!disks.mounted(addon.id)) {
        // Mounted at every start; one that is not has a missing or broken image, said at its mount.
        throw new Error(`the FS bucket ${addon.name} is not mounted, so it has no filesystem to back up`);
      }
      const objectKey = imageKey(addon.id, backupId);
      await this.withScratch(async (scratch) => {
        const member = memberName(addon.id);
        const createdAt = new Date();
        const use = disks.use(addon.id);
        await this.checkRoom(disks.image(addon.id), scratch, addon.name);
        const { frozenMs } = await whileFrozen(disks.folder(addon.id), () =>
          runChecked(copyArgv(disks.image(addon.id), join(scratch, member)), { cwd: '/', env: TOOL_ENV, timeoutMs: 30 * 60_000 }),
        );
        this.o.log(`The FS bucket ${addon.name} (${addon.id}) was frozen ${frozenMs.toFixed(0)} ms for its backup ${backupId}.`);
        const image = await imageSha256(join(scratch, member));
        const sizeBytes = await storeImage(this.o.store, objectKey, scratch, member).catch(async (error: Error) => {
          await this.o.store.delete(objectKey).catch(() => undefined);
          throw new Error(`The bucket's image could not be stored: ${error.message}`);
        });
        taken.push({
          objectKey,
          restorePoint: `${SHA_PREFIX}${image.sha256}`,
          counts: {
            image_bytes: image.sizeBytes,
            used_bytes: use?.usedBytes ?? 0,
            frozen_ms: Math.round(frozenMs),
          },
          sizeBytes,
          createdAt,
          finishedAt: new Date(),
        });
      });
    }
    return taken;
  }

  verify(backup: AddonBackupRow, addon: EngineAddon): Promise<string> {
    return this.withImage(backup, addon, async (_image, account) => account);
  }

  /**
   * The bucket gets the backup's image in place of its own: checked in a scratch folder first,
   * moved beside the live image, mounted in its place, then the linked apps' instances are
   * restarted on it.
   */
  async restoreInPlace(from: RestoreFrom, addon: EngineAddon): Promise<void> {
    imageOnly(from);
    await this.withImage(from.backup, addon, async (image) => {
      await this.moveIn(image, addon.id);
      await this.o.buckets.disks.replace(addon.id, await this.o.buckets.gid(addon.id));
      this.o.log(`The FS bucket ${addon.name} (${addon.id}) now mounts the image of backup ${from.backup.id}.`);
    });
    await this.o.restartApps(addon.id);
  }

  /**
   * A new bucket (made at the backup's size, linked to nothing yet) gets the image. Its files
   * belong to the source bucket's group: before the image is mounted where any app sees it,
   * it is mounted in the scratch folder (nodev, nosuid, noexec; nothing else sees it) and what
   * was the source's group becomes the new bucket's, links changed as links (never followed).
   */
  async restoreInto(from: RestoreFrom, source: EngineAddon, into: EngineAddon): Promise<void> {
    imageOnly(from);
    await this.withImage(from.backup, source, async (image, _account, scratch) => {
      const [oldGid, newGid] = [await this.o.buckets.gid(source.id), await this.o.buckets.gid(into.id)];
      const mountPoint = join(scratch, 'mnt');
      await mkdir(mountPoint, { mode: 0o700 });
      await runChecked(['mount', '-t', 'ext4', '-o', 'loop,nodev,nosuid,noexec', image, mountPoint], { cwd: '/', env: TOOL_ENV });
      try {
        await runChecked(regroupArgv(oldGid, newGid, mountPoint), { cwd: '/', env: TOOL_ENV, timeoutMs: 30 * 60_000 });
      } finally {
        await runChecked(['umount', mountPoint], { cwd: '/', env: TOOL_ENV });
      }
      await this.moveIn(image, into.id);
      await this.o.buckets.disks.replace(into.id, newGid);
    });
  }

  /** The new bucket is made at the size of the one backed up, an exclusive volume when it was one. */
  newAddonOptions(source: EngineAddon): NewAddonOptions {
    const bytes = Number(source.config.size_bytes);
    return {
      ...(Number.isSafeInteger(bytes) && bytes > 0 ? { plan: `${Math.round(bytes / 1024 ** 2)}M` } : {}),
      ...(source.config.exclusive === 'true' ? { exclusive: true } : {}),
    };
  }

  /** The stored archive itself (decrypted): `tar -xSzf` gives the sparse image, which mounts read-only with `mount -o loop,ro`. */
  async download(backup: AddonBackupRow, _addon: EngineAddon, use: (dump: Readable) => Promise<void>): Promise<void> {
    await this.o.sums.check([backup.object_key], `The download of backup ${backup.id}`);
    await use(await this.o.store.get(backup.object_key));
  }

  async deleteObject(key: string): Promise<void> {
    if (!key.startsWith(BUCKET_PREFIX)) throw new Error(`${key} is not an FS bucket image.`);
    await this.o.store.delete(key);
  }

  /** Beside the live image (the same filesystem) for the rename; copied when the scratch folder is on another. */
  private async moveIn(image: string, addonId: string): Promise<void> {
    const incoming = this.o.buckets.disks.incoming(addonId);
    await rm(incoming, { force: true });
    // Root's alone, as every image: its blocks are the bucket's files.
    await chmod(image, 0o600);
    try {
      await rename(image, incoming);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      await copyFile(image, incoming);
    }
  }

  /**
   * Checks the backup's object against its recorded sum, unpacks the image into a scratch
   * folder, compares its SHA-256 with the one taken at the snapshot and has e2fsck read it;
   * then hands it over with the account of those checks. The scratch folder goes whatever happens.
   */
  private async withImage<T>(
    backup: AddonBackupRow,
    addon: EngineAddon,
    use: (image: string, account: string, scratch: string) => Promise<T>,
  ): Promise<T> {
    const counted = JSON.parse(backup.counts_json) as { used_bytes?: unknown };
    const taken = backup.restore_point?.startsWith(SHA_PREFIX) ? backup.restore_point.slice(SHA_PREFIX.length) : undefined;
    if (!taken) throw new Error(`backup ${backup.id} has no image checksum to compare with`);
    const sums = describeSumCheck(await this.o.sums.check([backup.object_key], `The restore from backup ${backup.id}`));
    return this.withScratch(async (scratch) => {
      const image = await fetchImage(this.o.store, backup.object_key, scratch, memberName(backupAddonId(backup, addon)));
      const found = await imageSha256(image);
      if (found.sha256 !== taken) {
        throw new Error(
          `the image unpacked from ${backup.object_key} is not the one snapshotted: SHA-256 ${found.sha256}, ${taken} was taken`,
        );
      }
      const fsck = await runCaptured({ argv: fsckArgv(image), cwd: '/', env: TOOL_ENV, timeoutMs: 30 * 60_000 });
      if (fsck.exitCode !== 0) {
        const said = fsck.stdout.trim().split('\n').slice(-3).join(' / ');
        throw new Error(`e2fsck finds the restored filesystem damaged (exit ${fsck.exitCode}): ${said}`);
      }
      const used = typeof counted.used_bytes === 'number' ? `, ${sizeText(counted.used_bytes)} used` : '';
      const account = `${sums}; the image unpacked matches the SHA-256 taken at the snapshot; e2fsck -fn finds the filesystem clean${used}`;
      return use(image, account, scratch);
    });
  }

  /** The copy takes the image's written blocks on the scratch folder's disk: refused before the freeze when they do not fit. */
  private async checkRoom(image: string, scratch: string, name: string): Promise<void> {
    const needed = (await stat(image)).blocks * 512;
    const room = statfsSync(scratch);
    const free = room.bavail * room.bsize;
    if (needed > free) {
      throw new Error(
        `the copy of the FS bucket ${name} needs ${(needed / 1024 ** 2).toFixed(0)} MiB in ${this.o.scratchRoot}, and ${(free / 1024 ** 2).toFixed(0)} MiB are free there; free some space on the data folder's disk`,
      );
    }
  }

  private async withScratch<T>(use: (folder: string) => Promise<T>): Promise<T> {
    await mkdir(this.o.scratchRoot, { recursive: true, mode: 0o700 });
    const folder = join(this.o.scratchRoot, `fs-bucket-${randomBytes(6).toString('hex')}`);
    await mkdir(folder, { mode: 0o700 });
    try {
      return await use(folder);
    } finally {
      // A copy still mounted is let go first: the folder's removal never walks a bucket's files.
      await runCaptured({ argv: ['umount', '-l', join(folder, 'mnt')], cwd: '/', env: TOOL_ENV }).catch(() => undefined);
      await rm(folder, { recursive: true, force: true });
    }
  }
}

/**
 * What was the source bucket's group becomes the new one's, inside the restored copy only:
 * `-h` changes a link itself, `-P` follows none, and `--from` leaves files an app gave another
 * group as they are.
 */
export function regroupArgv(oldGid: number, newGid: number, mountPoint: string): string[] {
  return ['chown', '-R', '-h', '-P', `--from=:${oldGid}`, `:${newGid}`, mountPoint];
}

/** The archive's member is named by the bucket it was taken of (the backup's add-on). */
function backupAddonId(backup: AddonBackupRow, addon: EngineAddon): string {
  return backup.addon_id || addon.id;
}

function imageOnly(from: RestoreFrom): void {
  if (from.time) throw new Error('An FS bucket restores to a backup, not to a second.');
}

/** 14 KiB, 3.2 MiB, 1.5 GiB: the bytes a bucket uses, in the account of a restore test. */
export function sizeText(bytes: number): string {
  if (bytes < 1024 ** 2) return `${Math.round(bytes / 1024)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
}
