import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { runCaptured } from '../../executor/run-captured.js';

/**
 * The argv checking a base backup extracted into `dataDir` against the backup manifest
 * pg_basebackup put into its tar (as `backup_manifest`, last, when the tar goes to stdout):
 * every file there, its size and its checksum (SHA-256 since slipway asks for it, CRC32C in
 * older backups). The WAL is not in the base backup (`-X none`): it comes from the archive,
 * checked against its own sums, so pg_verifybackup does not look for it.
 */
export function verifyBackupArgv(binDir: string, dataDir: string): string[] {
  return [join(binDir, 'pg_verifybackup'), '--no-parse-wal', '--quiet', dataDir];
}

/**
 * Runs pg_verifybackup on a base backup just extracted, as the server's account (its files are
 * that account's), before any server starts on it. Resolves with a clause for the verification's
 * account; rejects naming the files that differ. A base backup without a manifest (none was
 * written before PostgreSQL 13) is accepted, saying its files were not checked.
 */
export async function checkBaseFiles(o: {
  binDir: string;
  dataDir: string;
  /** The object it came from, for messages; '' when it was streamed from the live server (a fork). */
  baseKey: string;
  user: { uid: number; gid: number };
}): Promise<string> {
  // lstat only: root opens nothing the copy holds.
  if (!(await lstat(join(o.dataDir, 'backup_manifest')).catch(() => undefined))) {
    return 'no backup manifest in the base backup: its files were not checked one by one';
  }
  const result = await runCaptured({
    argv: verifyBackupArgv(o.binDir, o.dataDir),
    cwd: '/',
    env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' },
    user: o.user,
  });
  if (result.exitCode === 0) return 'every file of the base backup matches its manifest';
  const which = o.baseKey ? `the base backup ${o.baseKey}` : 'the base backup streamed from the live server';
  throw new Error(`${which} differs from its manifest: ${manifestFailure(`${result.stderr}\n${result.stdout}`)}`);
}

/** pg_verifybackup's first complaints, each naming a file, without its program-name prefix. */
export function manifestFailure(output: string): string {
  const lines = output
    .split('\n')
    .map((line) => line.replace(/^pg_verifybackup: (error: )?/, '').trim())
    .filter((line) => line !== '' && !/^(hint|detail): /i.test(line));
  if (lines.length === 0) return 'pg_verifybackup failed without saying why';
  return lines.slice(0, 3).join('; ') + (lines.length > 3 ? ` (and ${lines.length - 3} more)` : '');
}
