import { access, readdir } from 'node:fs/promises';
import { constants } from 'node:fs';
import { join } from 'node:path';

/** Where Debian's postgresql-<major> packages put the server binaries. */
export const DEBIAN_POSTGRES_ROOT = '/usr/lib/postgresql';

export interface PostgresBinaries {
  major: number;
  initdb: string;
  postgres: string;
}

/**
 * Picks the binaries of `wantedMajor` (a cluster's PG_VERSION: its files only open with that
 * major) or, for a new cluster, the highest major installed.
 */
export async function findPostgresBinaries(wantedMajor?: number, root: string = DEBIAN_POSTGRES_ROOT): Promise<PostgresBinaries> {
  let entries: string[] = [];
  try {
    entries = await readdir(root);
  } catch {
    // reported below
  }
  const installed: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      await access(join(root, entry, 'bin', 'postgres'), constants.X_OK);
      await access(join(root, entry, 'bin', 'initdb'), constants.X_OK);
      installed.push(Number(entry));
    } catch {
      // a client-only package leaves a folder without the server
    }
  }
  installed.sort((a, b) => b - a);
  const major = wantedMajor ?? installed[0];
  if (major === undefined || !installed.includes(major)) {
    const seen = installed.length ? `found ${installed.join(', ')}` : 'found none';
    const hint =
      wantedMajor === undefined
        ? 'Install it with "apt-get install postgresql".'
        : `The cluster was created with PostgreSQL ${wantedMajor}: install "postgresql-${wantedMajor}" ` +
          `or upgrade the cluster with pg_upgrade.`;
    throw new Error(`No PostgreSQL ${wantedMajor ?? ''} server binaries in ${root}/<major>/bin (${seen}). ${hint}`.replace('  ', ' '));
  }
  const bin = join(root, String(major), 'bin');
  return { major, initdb: join(bin, 'initdb'), postgres: join(bin, 'postgres') };
}
