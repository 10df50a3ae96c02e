import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A small ext4 filesystem of its own, loop-mounted (root only), with an empty data folder in it. */
export interface LoopDisk {
  /** The folder holding the image and the mount point (on the machine's own disk). */
  root: string;
  mountPoint: string;
  dataDir: string;
  /** Bytes free on it, as `df` gives them to everyone. */
  freeBytes(): number;
  /** Unmounts it and removes its image and folders. */
  remove(): void;
}

export function makeLoopDisk(prefix: string, size: string): LoopDisk {
  const root = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const image = join(root, 'data.img');
  const mountPoint = join(root, 'mnt');
  execFileSync('truncate', ['-s', size, image]);
  // No blocks kept for root: the daemon runs as root and would write into them.
  execFileSync('mkfs.ext4', ['-q', '-F', '-m', '0', image]);
  const loopDevice = execFileSync('losetup', ['--find', '--show', image], { encoding: 'utf8' }).trim();
  mkdirSync(mountPoint);
  execFileSync('mount', [loopDevice, mountPoint]);
  const dataDir = join(mountPoint, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
  return {
    root,
    mountPoint,
    dataDir,
    freeBytes: () => Number(execFileSync('df', ['--output=avail', '-B1', mountPoint], { encoding: 'utf8' }).split('\n')[1]),
    remove: () => {
      spawnSync('umount', ['--lazy', mountPoint]);
      spawnSync('losetup', ['--detach', loopDevice]);
      rmSync(root, { recursive: true, force: true });
    },
  };
}
