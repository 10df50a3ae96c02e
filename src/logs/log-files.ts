import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The files of one log: `<key>.ndjson` is written, `<key>.ndjson.1` is the newest rotated one,
 * `<key>.ndjson.<n>` the oldest. Only the daemon writes the logs folder (mode 0700), so no
 * one else can plant a link there; opening without following links still costs nothing.
 */
export class LogFiles {
  readonly current: string;

  constructor(
    dir: string,
    readonly key: string,
  ) {
    if (!/^[a-z]+_[0-9a-f-]{36}$/.test(key)) throw new Error(`Invalid log key ${JSON.stringify(key)}: expected <kind>_<uuid>.`);
    this.current = join(dir, `${key}.ndjson`);
  }

  rotated(n: number): string {
    return `${this.current}.${n}`;
  }

  /**
   * Moves the current file to `.1`, `.1` to `.2`... and drops what falls beyond `keep` (also
   * files left by an earlier, larger `keep`). With `keep` 0 the current file is removed.
   */
  async rotate(keep: number): Promise<void> {
    await removeFrom(this, keep + 1);
    for (let n = keep - 1; n >= 1; n--) await ignoreMissing(rename(this.rotated(n), this.rotated(n + 1)));
    if (keep >= 1) await ignoreMissing(rename(this.current, this.rotated(1)));
    else await ignoreMissing(unlink(this.current));
  }

  /** Removes every file of the log. */
  async remove(): Promise<void> {
    await ignoreMissing(unlink(this.current));
    await removeFrom(this, 1);
  }

  /**
   * Opens every file of the log for reading, oldest first, with its size at this moment.
   * Synchronous on purpose: the caller takes it as one step between two writes of the log, so
   * each file holds whole lines and none is renamed halfway (a rotation after it does not
   * matter: an open file stays readable after it was renamed or removed).
   */
  openAll(keep: number): StoredFile[] {
    const files: StoredFile[] = [];
    try {
      for (let n = keep; n >= 0; n--) {
        const fd = openIfPresent(n === 0 ? this.current : this.rotated(n));
        if (fd !== undefined) files.push({ fd, size: fstatSync(fd).size });
      }
    } catch (error) {
      closeAll(files);
      throw error;
    }
    return files;
  }
}

/** One opened file of a log and the bytes of it that hold whole lines. */
export interface StoredFile {
  fd: number;
  size: number;
}

export function closeAll(files: StoredFile[]): void {
  for (const f of files) closeSync(f.fd);
  files.length = 0;
}

function openIfPresent(path: string): number | undefined {
  try {
    return openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Removes `.from`, `.from+1`... until one is missing (a bound keeps a damaged folder from looping). */
async function removeFrom(files: LogFiles, from: number): Promise<void> {
  for (let n = from; n < from + 100; n++) {
    try {
      await unlink(files.rotated(n));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
  }
}

async function ignoreMissing(operation: Promise<void>): Promise<void> {
  try {
    await operation;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
