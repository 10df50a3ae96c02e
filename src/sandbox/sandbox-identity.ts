import type { AppRow } from '../store/apps.js';
import type { SandboxLimits } from './cgroups.js';

/**
 * Who a process of an app runs as and with what: the app's own unix user, the limits of a
 * flavour, the shared host folders it reads. Instances, workers, hooks, one-off commands and
 * builds alike run under one.
 */
export interface SandboxIdentity {
  /** The app's own unprivileged unix user and group. */
  user: { uid: number; gid: number };
  limits: SandboxLimits;
  /** The flavour the limits come from, named in out-of-memory messages. */
  flavor: string;
  /** Shared host folders the process reads at the same path (the toolchains). */
  readOnlyPaths: string[];
  /**
   * The FS buckets of the app (src/addons/fs-bucket): each seen read-write at a folder inside
   * the release's folder, the process holding the bucket's group besides its own. Releases only:
   * builds get none.
   */
  buckets?: SandboxBucket[];
}

/**
 * How a bucket's filesystem is mounted wherever it is (the host, a Swarm bucket server's
 * namespace): a device node or set-uid file in it is inert, reading writes nothing, ACLs on
 * (the bucket's default ACL keeps files shared between apps).
 */
export const BUCKET_MOUNT_OPTIONS = 'nodev,nosuid,noatime,acl';

/** An FS bucket as a sandbox of a release sees it. */
export interface SandboxBucket {
  /** Inside the app's folder, without a leading slash (`uploads`): checked by its parser, checked again here. */
  path: string;
  /** The bucket's folder on the host: its filesystem's mount point. */
  source: string;
  /** The group every app sharing the bucket holds in its sandboxes. */
  gid: number;
}

/**
 * Who an app's processes run as and what they may use: the app's own unix user, the limits of
 * its flavour (its build flavour for builds), the shared folders they read.
 */
export interface SandboxPolicy {
  instance(app: AppRow): Promise<SandboxIdentity>;
  build(app: AppRow): Promise<SandboxIdentity>;
}
