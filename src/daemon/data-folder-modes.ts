import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** Folders of the data folder that only root (the daemon) may enter. */
export const ROOT_ONLY_FOLDERS = ['builds', 'apps', 'disks', 'releases', 'cache', 'repos', 'logs', 'sandboxes', 'runc'] as const;

/**
 * The platform's own files are root's alone: the store (and SQLite's -wal and -shm files, which
 * hold every variable of every app), the admin token, the host key, and every folder above the
 * apps' own. Applications never walk the data folder: their sandboxes get their own folders
 * mounted, so 0700 takes nothing from them. The data folder itself stays 0711 because the
 * add-on servers (running as their own users) reach their folders below it.
 */
export function lockDownDataFolder(dataDir: string): void {
  chmodSync(dataDir, 0o711);
  for (const folder of ROOT_ONLY_FOLDERS) {
    const path = join(dataDir, folder);
    mkdirSync(path, { recursive: true, mode: 0o700 });
    chmodSync(path, 0o700);
  }
  for (const file of ['slipway.db', 'slipway.db-wal', 'slipway.db-shm', 'admin-token', 'ssh_host_ed25519_key', 'daemon.pid']) {
    const path = join(dataDir, file);
    if (existsSync(path)) chmodSync(path, 0o600);
  }
}
