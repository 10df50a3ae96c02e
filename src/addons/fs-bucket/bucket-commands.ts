/**
 * The commands root runs for an FS bucket's filesystem, as argv arrays built by pure functions
 * (tested as arrays). None of them names a path inside the bucket: the image, the mount point
 * and the bucket's top folder are the platform's own.
 */
import { BUCKET_MOUNT_OPTIONS } from '../../sandbox/sandbox-identity.js';

/** ext4 in the image; no block reserved for root (the size is all the apps'); the top folder root's and the bucket group's. */
export function mkfsArgv(image: string, gid: number): string[] {
  return ['mkfs.ext4', '-q', '-F', '-m', '0', '-E', `root_owner=0:${gid}`, image];
}

/**
 * nodev, nosuid: a device node or set-uid file an app makes in its bucket is inert, on the host
 * and in every sandbox. noatime: reading a file writes nothing. ACLs on (ext4's default, said
 * once here): the top folder's default ACL is what keeps files shared.
 */
export function mountArgv(image: string, folder: string): string[] {
  return ['mount', '-t', 'ext4', '-o', `loop,${BUCKET_MOUNT_OPTIONS}`, image, folder];
}

/**
 * The top folder's default ACL: what is made inside gets read-write for its owner and the
 * bucket's group and nothing for others, whatever the app's umask (a default ACL replaces the
 * umask), so the apps sharing a bucket can change each other's files. setgid (2770, set apart)
 * passes the group down.
 */
export function defaultAclArgv(folder: string): string[] {
  return ['setfacl', '-m', 'd:u::rwx,d:g::rwx,d:o::---', folder];
}

/**
 * The bucket's loop device reads and writes its image with direct I/O (set once mounted; mount's
 * `loop` option has no switch for it). Buffered, each block sits twice in the page cache (the
 * bucket's and the image file's) and large reads and writes come out erratic, down to half the
 * host's; direct, they keep up with the host's disk (bench/fs-buckets.md).
 */
export function directIoArgv(loopDevice: string): string[] {
  return ['losetup', '--direct-io=on', loopDevice];
}

/** The block device a stat's `dev` names, as `/sys/dev/block/<major>:<minor>` (glibc's encoding of dev_t). */
export function sysfsBlockPath(dev: number): string {
  const high = Math.floor(dev / 2 ** 32);
  const low = dev % 2 ** 32;
  const major = ((low >>> 8) & 0xfff) | ((high & 0xfffff000) >>> 0);
  const minor = (low & 0xff) | ((low >>> 12) & 0xfff00) | (((high & 0xfff) << 20) >>> 0);
  return `/sys/dev/block/${major}:${minor}`;
}

export function unmountArgv(folder: string, lazy: boolean): string[] {
  return lazy ? ['umount', '-l', folder] : ['umount', folder];
}
