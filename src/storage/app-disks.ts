import { existsSync, lstatSync, mkdirSync, readFileSync } from 'node:fs';
import { open, rename, rm, rmdir, stat, statfs } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { runCaptured, runChecked } from '../executor/run-captured.js';
import { ConflictError } from '../core/errors.js';
import type { DiskUse } from '../core/disk-size.js';
import { humanSize } from '../shared/human-size.js';
import { mountSourceOf, mountsUnder } from './mount-table.js';
import type { DeployLayout } from './deploy-layout.js';
import { SYSTEM_TOOL_ENV } from '../executor/system-tools.js';

export interface AppDisksOptions {
  layout: DeployLayout;
  /** The budget an app has now: its own (`slipway scale --disk`) or the daemon's default. */
  budgetOf(appId: string): number;
  log(line: string): void;
}

/**
 * Each app's disk budget, enforced by the kernel: the app's folder (`<data>/apps/<app id>`,
 * holding its repository, build, caches and releases) is an ext4 filesystem of its own, kept in
 * a sparse image file (`<data>/disks/<app id>.img`) and loop-mounted there. A write past the
 * budget fails with ENOSPC in whatever process makes it; nothing polls. The image only takes
 * the blocks written, so a 2 GiB budget costs little until used.
 *
 * Mounts outlive the daemon (the serving instances run from releases inside them): a start
 * finds them mounted and leaves them alone.
 */
export class AppDisks {
  constructor(private readonly o: AppDisksOptions) {}

  private image(appId: string): string {
    return this.o.layout.diskImage(appId);
  }

  /**
   * Whether the app's filesystem is mounted over its folder now: the folder is on another
   * device than the folder holding it. Not read from /proc/self/mountinfo: a read of it while
   * other mounts come and go (other apps, sandboxes) may miss a line, and mounting the image a
   * second time over a mounted one would show a stale copy of the app's files.
   */
  mounted(appId: string): boolean {
    const folder = this.o.layout.appFolder(appId);
    try {
      return lstatSync(folder).dev !== lstatSync(dirname(folder)).dev;
    } catch {
      return false;
    }
  }

  /**
   * Makes the app's filesystem (once) and mounts it (when not mounted). The image is made at
   * the app's budget; an image smaller than the budget (raised while the daemon was down) grows.
   */
  async ensure(appId: string): Promise<void> {
    // One at a time per app: a push and a build may both ask first; a second mount must never happen.
    const running = this.ensuring.get(appId);
    if (running) return running;
    const done = this.mount(appId).finally(() => this.ensuring.delete(appId));
    this.ensuring.set(appId, done);
    return done;
  }

  private readonly ensuring = new Map<string, Promise<void>>();

  private async mount(appId: string): Promise<void> {
    const folder = this.o.layout.appFolder(appId);
    const image = this.image(appId);
    const budget = this.o.budgetOf(appId);
    mkdirSync(this.o.layout.disksFolder(), { recursive: true, mode: 0o700 });
    if (!existsSync(image)) {
      // Made under another name and renamed once whole: an image that exists holds a filesystem.
      const making = `${image}.making`;
      await rm(making, { force: true });
      await setLength(making, budget);
      // -m 0: no blocks reserved for root (the daemon writes there as root; the budget is all the app's).
      await runChecked(['mkfs.ext4', '-q', '-F', '-m', '0', '-E', 'root_owner=0:0', making], { cwd: '/', env: SYSTEM_TOOL_ENV });
      await rename(making, image);
    }
    if (this.mounted(appId)) return;
    // Not mounted: the one moment the filesystem can grow without the right to resize a mounted
    // one (a budget raised where that right is missing applies here).
    if ((await imageSize(image)) < budget) {
      await setLength(image, budget);
      // resize2fs wants a freshly checked filesystem; e2fsck exits 1 when it corrected something.
      const checked = await runCaptured({ argv: ['e2fsck', '-f', '-p', image], cwd: '/', env: SYSTEM_TOOL_ENV, timeoutMs: 10 * 60_000 });
      if (checked.exitCode === null || checked.exitCode > 1) {
        throw new Error(
          `e2fsck found errors it could not correct in the filesystem of ${appId} (exit ${checked.exitCode}): ${checked.stdout.trim()}`,
        );
      }
      await runChecked(['resize2fs', image], { cwd: '/', env: SYSTEM_TOOL_ENV, timeoutMs: 10 * 60_000 });
      this.o.log(`The filesystem of ${appId} grew to its disk budget of ${humanSize(budget)}.`);
    }
    mkdirSync(folder, { recursive: true, mode: 0o711 });
    if (!lstatSync(folder).isDirectory()) throw new Error(`${folder} is not a folder: cannot mount the app's filesystem there.`);
    // nodev, nosuid: nothing in an app's files gains a device or a set-uid bit on the host.
    await runChecked(['mount', '-t', 'ext4', '-o', 'loop,nodev,nosuid', image, folder], { cwd: '/', env: SYSTEM_TOOL_ENV });
    await runChecked(['chmod', '0711', folder], { cwd: '/', env: SYSTEM_TOOL_ENV });
  }

  /** The app's use now; null when its filesystem is not mounted (not made yet). */
  async use(appId: string): Promise<DiskUse | null> {
    if (!this.mounted(appId)) return null;
    const s = await statfs(this.o.layout.appFolder(appId));
    const budgetBytes = this.o.budgetOf(appId);
    const usedBytes = (s.blocks - s.bfree) * s.bsize;
    return { usedBytes, budgetBytes, freeBytes: s.bavail * s.bsize };
  }

  /**
   * Applies a new budget; says when it takes effect. Growing is online where the daemon may
   * resize a mounted filesystem (CAP_SYS_RESOURCE): the image grows, then `resize2fs` grows the
   * filesystem. Elsewhere the budget applies at the filesystem's next mount (after
   * `slipway system stop` and a start). Shrinking is refused: ext4 cannot shrink while
   * mounted, and the serving instances keep it mounted.
   */
  async setBudget(appId: string, bytes: number): Promise<'now' | 'at the next mount'> {
    const image = this.image(appId);
    if (!existsSync(image)) return 'now'; // made at the new size when the app first needs it
    const current = await imageSize(image);
    // The budget in force may be larger than the image (raised, waiting for the next mount).
    const floor = Math.max(current, this.o.budgetOf(appId));
    if (bytes < floor) {
      throw new ConflictError(
        `The disk budget cannot shrink below ${humanSize(floor)}: the app's filesystem is in use and ext4 does not shrink while mounted.`,
        'Keep the budget, or delete the application and create it again with the smaller budget.',
      );
    }
    if (bytes === current || !this.mounted(appId)) return bytes === current ? 'now' : 'at the next mount';
    const folder = this.o.layout.appFolder(appId);
    const device = mountSourceOf(readFileSync('/proc/self/mountinfo', 'utf8'), folder);
    if (!device?.startsWith('/dev/loop')) return 'at the next mount';
    const sizeBefore = await filesystemBytes(folder);
    await setLength(image, bytes);
    try {
      // Once more when the first pass left the filesystem as it was: on a loaded machine resize2fs
      // has been seen to find nothing to do (exit 0) right after the device was told its new size.
      for (let attempt = 1; (await filesystemBytes(folder)) <= sizeBefore; attempt++) {
        if (attempt > 2) throw new Error('resize2fs left the mounted filesystem at its size');
        await runChecked(['losetup', '-c', device], { cwd: '/', env: SYSTEM_TOOL_ENV });
        await runChecked(['resize2fs', device], { cwd: '/', env: SYSTEM_TOOL_ENV, timeoutMs: 10 * 60_000 });
      }
    } catch (error) {
      // The image goes back to the size of the filesystem in it, so the next mount sees it must grow.
      await setLength(image, current);
      await runChecked(['losetup', '-c', device], { cwd: '/', env: SYSTEM_TOOL_ENV });
      this.o.log(`The filesystem of ${appId} could not grow while mounted (${(error as Error).message}): it grows at its next mount.`);
      return 'at the next mount';
    }
    this.o.log(`The disk budget of ${appId} is now ${humanSize(bytes)}.`);
    return 'now';
  }

  /** Every app's filesystem unmounted (`slipway system stop`, once nothing of the apps runs). */
  async unmountAll(): Promise<void> {
    const apps = join(this.o.layout.dataDir, 'apps');
    for (const mountPoint of mountsUnder(readFileSync('/proc/self/mountinfo', 'utf8'), apps)) {
      if (mountPoint === apps) continue;
      const plain = await runCaptured({ argv: ['umount', mountPoint], cwd: '/', env: SYSTEM_TOOL_ENV });
      // Something still holds it (a process that outlived the stop): detached now, freed after it.
      if (plain.exitCode !== 0) await runChecked(['umount', '-l', mountPoint], { cwd: '/', env: SYSTEM_TOOL_ENV });
    }
  }

  /** Unmounts the app's filesystem and removes its image (the app is deleted). */
  async remove(appId: string): Promise<void> {
    const folder = this.o.layout.appFolder(appId);
    // Lazy: a sandbox still ending may hold a file open; the kernel frees the loop device after it.
    if (this.mounted(appId)) await runChecked(['umount', '-l', folder], { cwd: '/', env: SYSTEM_TOOL_ENV });
    await rm(this.image(appId), { force: true });
    await rmdir(folder).catch(() => undefined);
  }

  /** Every app's filesystem made and mounted (a daemon start); a failure is reported, the others go on. */
  async ensureAll(appIds: string[]): Promise<void> {
    for (const appId of appIds) {
      try {
        await this.ensure(appId);
      } catch (error) {
        this.o.log(`Could not mount the filesystem of ${appId}: ${(error as Error).message}`);
      }
    }
  }
}

async function imageSize(path: string): Promise<number> {
  return (await stat(path)).size;
}

/** Sets a root-owned image file's length (sparse: no block is written). */
async function setLength(path: string, bytes: number): Promise<void> {
  const file = await open(path, 'a', 0o600);
  try {
    await file.truncate(bytes);
  } finally {
    await file.close();
  }
}

/** The size a mounted filesystem offers (its blocks after its own overhead). */
async function filesystemBytes(folder: string): Promise<number> {
  const s = await statfs(folder);
  return s.blocks * s.bsize;
}
