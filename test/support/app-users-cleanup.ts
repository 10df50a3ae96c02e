import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

const dataDirs = new Set<string>();
let registered = false;

/**
 * Test daemons live in throw-away data folders, but the unix users they create for their apps
 * are the machine's: when the test process ends, the users recorded in each test store go too.
 */
export function removeAppUsersAtExit(dataDir: string): void {
  dataDirs.add(dataDir);
  if (registered) return;
  registered = true;
  process.once('exit', () => {
    for (const dir of dataDirs) {
      const path = join(dir, 'slipway.db');
      if (!existsSync(path)) continue;
      let names: string[] = [];
      try {
        const db = new Database(path, { readonly: true, fileMustExist: true });
        names = (db.prepare('SELECT name FROM app_users').all() as Array<{ name: string }>).map((r) => r.name);
        db.close();
      } catch {
        continue;
      }
      for (const name of names) {
        if (!/^slw-[0-9a-f]{12}$/.test(name)) continue;
        spawnSync('userdel', [name], { stdio: 'ignore' });
        spawnSync('groupdel', [name], { stdio: 'ignore' });
      }
    }
  });
}
