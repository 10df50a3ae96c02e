import { SlipwayError } from './errors.js';

/** A write the store or the daemon could not make because the data folder's disk is full. */
export class DiskFullError extends SlipwayError {
  constructor() {
    super(
      507,
      'disk_full',
      "The data folder's disk is full: the change was not saved.",
      'Running apps keep serving and reads still work. Free space on that disk (old backups, unused apps, other files), then retry; the daemon needs no restart.',
    );
  }
}

/**
 * Whether an error is a full disk: SQLite's SQLITE_FULL, an I/O error SQLite reports when a
 * write or a journal could not grow (what ENOSPC becomes under it), or Node's ENOSPC/EDQUOT.
 */
export function isDiskFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT' || DISK_IO_ERRORS.has(code);
}

/** SQLite's extended I/O codes of a write that could not be made (the ones ENOSPC gives). */
const DISK_IO_ERRORS = new Set(['SQLITE_IOERR_WRITE', 'SQLITE_IOERR_FSYNC', 'SQLITE_IOERR_TRUNCATE', 'SQLITE_IOERR_SHMSIZE']);

/** The error to give a user: a full disk becomes a DiskFullError, anything else stays itself. */
export function userFacingDiskError(error: unknown): unknown {
  return isDiskFull(error) && !(error instanceof SlipwayError) ? new DiskFullError() : error;
}
