import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import type { Store } from '../store/store.js';
import type { AppUsers } from '../sandbox/app-users.js';
import { runCommand } from '../executor/run-command.js';

/**
 * Gives every application its own user and hands it its folders (releases, caches). A data
 * folder from before per-app users had them all owned by one shared user: the first start after
 * the upgrade re-owns them, without a rebuild. Later starts find nothing to change. Runs before
 * any sandbox starts, so no process of an app can change a tree while root re-owns it, and
 * `chown -P` never follows a symbolic link in it.
 */
export async function migrateAppFolders(store: Store, appUsers: AppUsers, dataDir: string, log: (line: string) => void): Promise<void> {
  for (const app of store.apps.all()) {
    const user = await appUsers.ensure(app.id);
    for (const folder of [join(dataDir, 'releases', app.id), join(dataDir, 'cache', 'apps', app.id)]) {
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
