import { readFile } from 'node:fs/promises';

/**
 * The pid a pid file names (its first line: PostgreSQL's postmaster.pid says more after it);
 * undefined when the file is missing or malformed. Whether that pid still runs, and is the
 * program meant, is for the caller to check (`pid-alive.ts`, its command line).
 */
export async function readPidFile(path: string): Promise<number | undefined> {
  try {
    const first = (await readFile(path, 'utf8')).split('\n')[0]!.trim();
    const pid = Number(first);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
