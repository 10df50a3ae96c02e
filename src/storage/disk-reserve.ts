import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { humanSize } from '../shared/human-size.js';
import { SlipwayError } from '../core/errors.js';

/** Free space kept on the data folder's filesystem when the operator gives none (`--min-free-disk`). */
export const DEFAULT_MIN_FREE_DISK = 1024 * 1024 * 1024;

/** A folder whose filesystem must keep the reserve free, and what the operator calls it. */
export interface ReservedFolder {
  label: string;
  path: string;
}

/** Bytes an unprivileged writer may still use on the filesystem holding `path`. */
export type FreeBytesOf = (path: string) => Promise<number>;

/**
 * Free space as the filesystem offers it to everyone (`bavail`): the blocks ext4 keeps for root
 * are the daemon's last margin to write its own store, not room for builds and backups.
 */
export const freeBytesOf: FreeBytesOf = async (path) => {
  // A folder not made yet (a backup folder before the first backup) will be on its parent's disk.
  for (let at = path; ; at = dirname(at)) {
    try {
      const stats = await statfs(at);
      return stats.bavail * stats.bsize;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(at) === at) throw error;
    }
  }
};

/** A build or a backup refused because a filesystem it writes to is below the reserve. */
export class DiskReserveError extends SlipwayError {
  constructor(what: string, folder: ReservedFolder, free: number, reserve: number) {
    super(
      507,
      'disk_reserve',
      `The ${what} was refused: the ${folder.label} (${folder.path}) has ${humanSize(free)} free, below the reserve of ${humanSize(reserve)}.`,
      'Running apps keep serving. Free space on that disk (old backups, unused apps: `slipway delete`, other files), or start the daemon with a smaller --min-free-disk, then retry.',
    );
  }
}

/**
 * The free space builds and backups leave on the disks the platform writes to (`--min-free-disk`),
 * so a host never fills up under a build or a backup and the store keeps room to write. Serving
 * never asks it: running apps are not stopped by a full disk.
 */
export class DiskReserve {
  constructor(
    readonly minFree: number,
    readonly folders: readonly ReservedFolder[],
    private readonly freeOf: FreeBytesOf = freeBytesOf,
  ) {}

  /** Each folder's free bytes (a folder that cannot be read counts as unknown: null). */
  async free(): Promise<Array<ReservedFolder & { free: number | null }>> {
    return Promise.all(this.folders.map(async (folder) => ({ ...folder, free: await this.freeOf(folder.path).catch(() => null) })));
  }

  /**
   * Throws a DiskReserveError when a folder (the reserved ones, then `extra`) has less than
   * the reserve free; `what` names the refused work (`build`, `backup of add-on x`).
   * A reserve of 0 turns the check off.
   */
  /**
   * What may still be written to the first reserved folder's filesystem (the data folder's disk)
   * before it goes below the reserve: negative when it is below already. Undefined when the
   * reserve is off or the filesystem cannot be asked.
   */
  async room(): Promise<{ folder: ReservedFolder; free: number; room: number } | undefined> {
    const folder = this.folders[0];
    if (this.minFree <= 0 || !folder) return undefined;
    const free = await this.freeOf(folder.path).catch(() => undefined);
    return free === undefined ? undefined : { folder, free, room: free - this.minFree };
  }

  /**
   * The lines a pusher reads when a push would take the data folder's disk below the reserve,
   * or finds it below already: the same refusal as a build's, with what the push may still be.
   */
  pushRefusal(state: { folder: ReservedFolder; free: number; room: number }): string[] {
    const where = `the ${state.folder.label} (${state.folder.path})`;
    return [
      state.room <= 0
        ? `slipway: push refused: ${where} has ${humanSize(state.free)} free, below the reserve of ${humanSize(this.minFree)}.`
        : `slipway: push refused: it is larger than the ${humanSize(state.room)} ${where} has free above the reserve of ${humanSize(this.minFree)}.`,
      'slipway: nothing of it was kept; running apps keep serving. Free space on that disk (old backups, unused apps: `slipway delete`, other files), or start the daemon with a smaller --min-free-disk, then push again.',
    ];
  }

  async check(what: string, extra: readonly ReservedFolder[] = []): Promise<void> {
    if (this.minFree <= 0) return;
    for (const folder of [...this.folders, ...extra]) {
      const free = await this.freeOf(folder.path).catch(() => undefined);
      // A filesystem that cannot be asked is not known to be full: the work itself will tell.
      if (free !== undefined && free < this.minFree) throw new DiskReserveError(what, folder, free, this.minFree);
    }
  }
}
