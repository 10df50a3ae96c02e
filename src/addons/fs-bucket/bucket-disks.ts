import { lstatSync, mkdirSync, readFileSync, realpathSync, statfsSync } from 'node:fs';
import { chmod, chown, lstat, open, readFile, rename, rm, rmdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { runCaptured, runChecked } from '../../executor/run-captured.js';
import { mountsUnder } from '../../storage/mount-table.js';
import { defaultAclArgv, directIoArgv, mkfsArgv, mountArgv, sysfsBlockPath, unmountArgv } from './bucket-commands.js';
import { SYSTEM_TOOL_ENV } from '../../executor/system-tools.js';

/** The use of a bucket's filesystem now. */
export interface BucketUse {
  usedBytes: number;
  sizeBytes: number;
}

/**
 * Each FS bucket an ext4 filesystem of its own, at the bucket's size, in a sparse image
 * (`<data>/fs-buckets/<add-on id>.img`, root's, 0600) loop-mounted at `<data>/fs-buckets/<add-on id>`.
 * A write past the size fails with ENOSPC in the app that makes it; other buckets, the apps'
 * own filesystems and the host's disk are other filesystems. The image only takes the blocks
 * written. Mounts outlive the daemon (instances keep using them); a start mounts what is not
 * mounted (after a reboot).
 *
 * Root never reads inside a bucket: it makes the filesystem, sets its top folder (which no app
 * can replace: it is the filesystem's root), mounts, measures with statfs and unmounts.
 */
export class BucketDisks {
  constructor(private readonly root: string) {}

  folder(addonId: string): string {
    return join(this.root, checkId(addonId));
  }

  /** The bucket's image file (root's): the backups read it as a block file, never the files inside. */
  image(addonId: string): string {
    return `${this.folder(addonId)}.img`;
  }

  /** Where a restored image waits beside the live one, on the same filesystem, to be renamed over it. */
  incoming(addonId: string): string {
    return `${this.image(addonId)}.restoring`;
  }

  /**
   * The image at `incoming(addonId)` becomes the bucket's: the host's mount is let go (lazily:
   * sandboxes still running keep the old filesystem through their binds until they end), the
   * new image is renamed over the old one (whose blocks go with the last bind) and mounted.
   */
  async replace(addonId: string, gid: number): Promise<string> {
    const incoming = this.incoming(addonId);
    const info = await lstat(incoming);
    if (!info.isFile()) throw new Error(`${incoming} is not a plain file: not an image to mount.`);
    await this.mounting.get(addonId)?.catch(() => undefined);
    // Held as the bucket's mount meanwhile: a sandbox starting now waits for the new image
    // rather than mounting the old one between the unmount and the rename.
    const done = (async () => {
      if (this.mounted(addonId)) await runChecked(unmountArgv(this.folder(addonId), true), { cwd: '/', env: SYSTEM_TOOL_ENV });
      await rename(incoming, this.image(addonId));
      return this.mountNow(addonId, gid);
    })().finally(() => this.mounting.delete(addonId));
    this.mounting.set(addonId, done);
    return done;
  }

  /** Mounted now: the folder is on another device than the folder holding it (not read from mountinfo, which may miss a line). */
  mounted(addonId: string): boolean {
    const folder = this.folder(addonId);
    try {
      return lstatSync(folder).dev !== lstatSync(dirname(folder)).dev;
    } catch {
      return false;
    }
  }

  /** Makes the bucket's filesystem at its size (once): made under another name, renamed once whole. */
  async make(addonId: string, sizeBytes: number, gid: number): Promise<void> {
    mkdirSync(this.root, { recursive: true, mode: 0o711 });
    const image = this.image(addonId);
    if (await exists(image)) return;
    const making = `${image}.making`;
    await rm(making, { force: true });
    const file = await open(making, 'w', 0o600);
    try {
      await file.truncate(sizeBytes);
    } finally {
      await file.close();
    }
    await runChecked(mkfsArgv(making, gid), { cwd: '/', env: SYSTEM_TOOL_ENV });
    await rename(making, image);
  }

  /** Mounts the bucket when it is not; its top folder gets the group, setgid and the default ACL again. */
  mount(addonId: string, gid: number): Promise<string> {
    const running = this.mounting.get(addonId);
    if (running) return running;
    const done = this.mountNow(addonId, gid).finally(() => this.mounting.delete(addonId));
    this.mounting.set(addonId, done);
    return done;
  }

  private readonly mounting = new Map<string, Promise<string>>();

  private async mountNow(addonId: string, gid: number): Promise<string> {
    const folder = this.folder(addonId);
    if (!this.mounted(addonId)) {
      const image = this.image(addonId);
      if (!(await exists(image))) throw new Error(`The filesystem of the FS bucket ${addonId} is missing (${image}).`);
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      if (!(await lstat(folder)).isDirectory()) throw new Error(`${folder} is not a folder: cannot mount the FS bucket there.`);
      await runChecked(mountArgv(image, folder), { cwd: '/', env: SYSTEM_TOOL_ENV });
      await this.directIo(folder, image);
    }
    // The filesystem's root: no app can make it a link or move it. The group may have a new
    // number (a host reinstalled), so it is set at every mount.
    await chown(folder, 0, gid);
    await chmod(folder, 0o2770);
    await runChecked(defaultAclArgv(folder), { cwd: '/', env: SYSTEM_TOOL_ENV });
    return folder;
  }

  /**
   * Direct I/O on the loop device under a just-mounted bucket (bucket-commands.ts says why). The
   * device is the one the mount point's filesystem is on, checked to be a loop device over this
   * image. A speed-up only: where the host's filesystem refuses direct I/O the bucket works as
   * before, buffered.
   */
  private async directIo(folder: string, image: string): Promise<void> {
    let device: string;
    try {
      const block = realpathSync(sysfsBlockPath(lstatSync(folder).dev));
      if (readFileSync(join(block, 'loop', 'backing_file'), 'utf8').trim() !== image) return;
      device = `/dev/${basename(block)}`;
    } catch {
      return;
    }
    await runCaptured({ argv: directIoArgv(device), cwd: '/', env: SYSTEM_TOOL_ENV });
  }

  /** Size used against size; undefined when not mounted. statfs on the mount point reads nothing inside. */
  use(addonId: string): BucketUse | undefined {
    if (!this.mounted(addonId)) return undefined;
    const s = statfsSync(this.folder(addonId));
    return { usedBytes: (s.blocks - s.bfree) * s.bsize, sizeBytes: s.blocks * s.bsize };
  }

  /** Unmounts one bucket; lazily when something holds it (a sandbox still ending). */
  async unmount(addonId: string): Promise<void> {
    if (!this.mounted(addonId)) return;
    const folder = this.folder(addonId);
    const plain = await runCaptured({ argv: unmountArgv(folder, false), cwd: '/', env: SYSTEM_TOOL_ENV });
    if (plain.exitCode !== 0) await runChecked(unmountArgv(folder, true), { cwd: '/', env: SYSTEM_TOOL_ENV });
  }

  /** Every bucket unmounted (`slipway system stop`, the daemon's end in tests). */
  async unmountAll(): Promise<void> {
    let mounts: string[];
    try {
      mounts = mountsUnder(await readFile('/proc/self/mountinfo', 'utf8'), this.root);
    } catch {
      return;
    }
    for (const mountPoint of mounts) {
      if (mountPoint === this.root) continue;
      const plain = await runCaptured({ argv: unmountArgv(mountPoint, false), cwd: '/', env: SYSTEM_TOOL_ENV });
      if (plain.exitCode !== 0) await runChecked(unmountArgv(mountPoint, true), { cwd: '/', env: SYSTEM_TOOL_ENV });
    }
  }

  /** The bucket and its files gone (the add-on is deleted). */
  async remove(addonId: string): Promise<void> {
    await this.unmount(addonId);
    await rm(this.image(addonId), { force: true });
    await rm(`${this.image(addonId)}.making`, { force: true });
    await rm(this.incoming(addonId), { force: true });
    await rmdir(this.folder(addonId)).catch(() => undefined);
  }
}

/** The add-on id names files of the platform: nothing but its own characters. */
function checkId(addonId: string): string {
  if (!/^addon_[0-9a-f-]{36}$/.test(addonId)) throw new Error(`Not an add-on id: ${JSON.stringify(addonId.slice(0, 60))}.`);
  return addonId;
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}
