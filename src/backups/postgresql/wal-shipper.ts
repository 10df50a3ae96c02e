import { constants, createReadStream } from 'node:fs';
import { open, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { BackupStore } from '../store/backup-store.js';

import { isWalFileName } from '../../addons/postgresql/wal-names.js';

export { isWalFileName };

/** The archive of the cluster shared by the add-ons of earlier versions; a server of one add-on has `postgresql/<id>/wal/`. */
export const WAL_PREFIX = 'postgresql/wal/';

/** The store key of an archived WAL file. */
export function walKey(name: string, prefix: string = WAL_PREFIX): string {
  if (!isWalFileName(name)) throw new Error(`"${name}" is not a WAL file name.`);
  return `${prefix}${name}`;
}

export interface WalShipperOptions {
  /** The folder archive_command copies finished segments to (the server user's). */
  spoolDir: string;
  store: BackupStore;
  /** Where its WAL goes in the store (WAL_PREFIX, or an add-on server's `postgresql/<id>/wal/`). */
  prefix?: string;
  log(line: string): void;
  /** How often the spool is emptied on its own (ms). */
  intervalMs?: number;
}

/**
 * Moves the WAL segments PostgreSQL archived into the spool on to the backup store, then
 * removes them from the spool. PostgreSQL's archiving only needs the spool (a local copy),
 * so it goes on while no daemon runs; the next daemon ships what piled up.
 */
export class WalShipper {
  private running: Promise<number> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failing = false;

  constructor(private readonly o: WalShipperOptions) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.shipAll().catch(() => undefined), this.o.intervalMs ?? 5_000);
    this.timer.unref();
    void this.shipAll().catch(() => undefined);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Ships every file of the spool now (one run at a time); resolves with how many were shipped. */
  shipAll(): Promise<number> {
    const previous = this.running ?? Promise.resolve(0);
    const run = previous.catch(() => 0).then(() => this.shipOnce());
    this.running = run;
    return run;
  }

  private async shipOnce(): Promise<number> {
    let names: string[];
    try {
      names = (await readdir(this.o.spoolDir)).filter(isWalFileName).sort();
    } catch (error) {
      // No spool yet: the PostgreSQL server has never started on this data folder.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw error;
    }
    let shipped = 0;
    try {
      for (const name of names) {
        await this.shipFile(name);
        shipped++;
      }
      if (this.failing) this.o.log('WAL archiving to the backup store works again.');
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.o.log(`Could not ship WAL to the backup store (kept in the spool, retried): ${(error as Error).message}`);
      this.failing = true;
      throw error;
    }
    return shipped;
  }

  private async shipFile(name: string): Promise<void> {
    const path = join(this.o.spoolDir, name);
    // The spool belongs to the server's account: a link placed there is refused, not followed.
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      if (!(await handle.stat()).isFile()) throw new Error(`${path} is not a regular file.`);
      await this.o.store.put(walKey(name, this.o.prefix), createReadStream('', { fd: handle.fd, autoClose: false }));
    } finally {
      await handle.close();
    }
    await unlink(path);
  }
}
