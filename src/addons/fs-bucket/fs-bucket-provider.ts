import { join } from 'node:path';
import { humanSize } from '../../shared/human-size.js';
import type { AddonProvider, AddonRecord, ProvisionResult } from '../provider.js';
import { BucketDisks, type BucketUse } from './bucket-disks.js';
import { thaw } from './bucket-freeze.js';
import { BucketGroups } from './bucket-groups.js';
import { bucketHost } from './bucket-names.js';
import { bucketSizeOfPlan, DEFAULT_BUCKET_BYTES, MAX_BUCKET_BYTES, MIN_BUCKET_BYTES } from './bucket-size.js';

export const FS_BUCKET = 'fs-bucket';

export interface FsBucketProviderOptions {
  /** slipway's data folder: the buckets live in `fs-buckets/` there. */
  dataDir: string;
  log?(line: string): void;
}

/** Where a bucket is for the sandboxes: its mounted folder and its group. */
export interface BucketPlace {
  source: string;
  gid: number;
}

/**
 * FS buckets (README.md beside this file): a folder shared by every process of the apps linked
 * to it, at the path each names with CC_FS_BUCKET, its size held by the kernel. No server runs:
 * the add-on is a filesystem, mounted at start and into each sandbox of a release.
 */
export class FsBucketProvider implements AddonProvider {
  readonly name = FS_BUCKET;
  readonly description = 'A folder shared by the instances of the apps linked to it, at the path each names (CC_FS_BUCKET)';
  readonly limits =
    `${humanSize(DEFAULT_BUCKET_BYTES)} unless --plan gives a size (${humanSize(MIN_BUCKET_BYTES)} to ${humanSize(MAX_BUCKET_BYTES)}), held by the kernel`;
  /** The images and mounts: the backups read an image as a block file and put a restored one in place. */
  readonly disks: BucketDisks;
  private readonly groups = new BucketGroups();

  constructor(private readonly o: FsBucketProviderOptions) {
    this.disks = new BucketDisks(join(o.dataDir, 'fs-buckets'));
  }

  async start(): Promise<void> {}

  async provision(addon: AddonRecord): Promise<ProvisionResult> {
    const sizeBytes = bucketSizeOfPlan(addon.plan);
    const gid = await this.groups.ensure(addon.id);
    try {
      await this.disks.make(addon.id, sizeBytes, gid);
      await this.disks.mount(addon.id, gid);
    } catch (error) {
      await this.disks.remove(addon.id).catch(() => undefined);
      await this.groups.remove(addon.id).catch(() => undefined);
      throw error;
    }
    // An exclusive volume is the same filesystem; the flag changes how its app is served and scaled.
    return { config: { host: bucketHost(addon.id), size_bytes: String(sizeBytes), ...(addon.exclusive ? { exclusive: 'true' } : {}) } };
  }

  env(config: Record<string, string>): Record<string, string> {
    return config.host ? { BUCKET_HOST: config.host } : {};
  }

  /**
   * A start after a reboot mounts it again; one after a daemon restart finds it mounted, and
   * thaws it in case the last daemon stopped while a backup held it frozen.
   */
  async resume(addon: Pick<AddonRecord, 'id'>): Promise<void> {
    // Thawed first: the mount sets the top folder's owner, which would wait on a frozen filesystem.
    if (this.disks.mounted(addon.id) && (await thaw(this.disks.folder(addon.id)))) {
      this.o.log?.(`The FS bucket ${addon.id} was left frozen by a backup the last daemon did not finish; it is thawed.`);
    }
    await this.place(addon.id);
  }

  /** The bucket's group number (made again when missing). */
  gid(addonId: string): Promise<number> {
    return this.groups.ensure(addonId);
  }

  /** The bucket mounted (mounted now when it is not) and its group, for a sandbox to bind. */
  async place(addonId: string): Promise<BucketPlace> {
    const gid = await this.groups.ensure(addonId);
    return { source: await this.disks.mount(addonId, gid), gid };
  }

  /** Size used against size, undefined when not mounted. Reads nothing inside the bucket. */
  use(addonId: string, config: Record<string, string>): BucketUse | undefined {
    const use = this.disks.use(addonId);
    const planned = Number(config.size_bytes);
    // The filesystem's own blocks count as used; the plan's size is what the user chose.
    return use && Number.isFinite(planned) ? { usedBytes: use.usedBytes, sizeBytes: planned } : use;
  }

  async deprovision(addon: Pick<AddonRecord, 'id'>): Promise<void> {
    await this.disks.remove(addon.id);
    await this.groups.remove(addon.id);
  }

  /** `slipway system stop`: every bucket unmounted (the instances are stopped before), files kept. */
  async stop(): Promise<void> {
    await this.disks.unmountAll();
  }

  /** The mounts stay for the instances that run on; the next daemon finds them. */
  async detach(): Promise<void> {}

  superviseWith(): void {}
}
