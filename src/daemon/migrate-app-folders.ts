import { existsSync, lstatSync } from 'node:fs';
import type { Store } from '../store/store.js';
import type { AppUsers } from '../sandbox/app-users.js';
import { runCommand } from '../executor/run-command.js';
import { rm } from 'node:fs/promises';
import type { DeployLayout } from '../storage/deploy-layout.js';
import type { AppDisks } from '../storage/app-disks.js';

/**
 * Gives every application its own user and hands it its folders (releases, caches). A data
 * folder from before per-app users had them all owned by one shared user: the first start after
 * the upgrade re-owns them, without a rebuild. Later starts find nothing to change. Runs before
 * any sandbox starts, so no process of an app can change a tree while root re-owns it, and
 * `chown -P` never follows a symbolic link in it.
 */
export async function migrateAppFolders(
  store: Store,
  appUsers: AppUsers,
  layout: DeployLayout,
  log: (line: string) => void,
): Promise<void> {
  for (const app of store.apps.all()) {
    const user = await appUsers.ensure(app.id);
    const legacy = layout.legacyFolders(app.id);
    for (const folder of [layout.releasesFolder(app.id), layout.appCacheFolder(app.id), legacy.releases, legacy.cache]) {
      if (!existsSync(folder)) continue;
      const info = lstatSync(folder);
      if (!info.isDirectory() || (info.uid === user.uid && (info.mode & 0o777) === 0o700)) continue;
      const result = await runCommand({
        argv: ['chown', '-R', '-P', `${user.uid}:${user.gid}`, folder],
        cwd: '/',
        env: { PATH: '/usr/bin:/bin', LC_ALL: 'C' },
        timeoutMs: 10 * 60_000,
      });
      await runCommand({ argv: ['chmod', '0700', folder], cwd: '/', env: { PATH: '/usr/bin:/bin' } });
      if (result.exitCode === 0) log(`Handed ${folder} to ${user.name} (uid ${user.uid}).`);
      else log(`Could not hand ${folder} to ${user.name}: chown exited with ${result.exitCode}.`);
    }
  }
}

/**
 * A data folder from before per-app filesystems kept each app's repository and caches in
 * shared folders: the first start after the upgrade moves them into the app's own filesystem
 * (mounted by then), so its budget counts them. Releases stay where their records say (a
 * serving instance runs from its folder) until retention removes them. A move that does not
 * fit the budget is undone and reported: the app then starts with an empty cache, and its
 * repository must be pushed again after the budget is raised.
 */
export async function moveIntoAppFolders(store: Store, layout: DeployLayout, disks: AppDisks, log: (line: string) => void): Promise<void> {
  for (const app of store.apps.all()) {
    if (!disks.mounted(app.id)) continue;
    const legacy = layout.legacyFolders(app.id);
    for (const [from, to] of [
      [legacy.repository, layout.repository(app.id)],
      [legacy.cache, layout.appCacheFolder(app.id)],
    ] as const) {
      if (!existsSync(from) || existsSync(to)) continue;
      // mv as root copies across filesystems keeping owners and modes, links as links (never followed).
      const moved = await runCommand({
        argv: ['mv', '-T', from, to],
        cwd: '/',
        env: { PATH: '/usr/bin:/bin', LC_ALL: 'C' },
        timeoutMs: 30 * 60_000,
      });
      if (moved.exitCode === 0) {
        log(`Moved ${from} into the filesystem of ${app.id}.`);
      } else {
        await rm(to, { recursive: true, force: true });
        log(
          `Could not move ${from} into the filesystem of ${app.id} (mv exited with ${moved.exitCode}; its disk budget may be too small): it stays where it is.`,
        );
      }
    }
  }
}
