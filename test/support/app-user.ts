/**
 * An application's unix user, made the way the daemon makes one (src/sandbox/app-users.ts): the
 * app is recorded in a store of its own and gets its user and group, numbered from the daemon's
 * range. For tests and benches that start sandboxes without a daemon. `remove()` deletes the user
 * and its group; one still there when the process exits (a test failed before removing it) is
 * deleted then, with whatever still runs as it. Needs root.
 */
import { spawnSync } from 'node:child_process';
import { Store } from '../../src/store/store.js';
import { AppUsers, userNameFor, type AppIdentity } from '../../src/sandbox/app-users.js';
import { lookupUser } from '../../src/executor/app-user.js';

export interface TestAppUser {
  user: AppIdentity;
  remove(): Promise<void>;
}

const leftAtExit = new Set<string>();
let registered = false;

/** `label` names the app in its store (a valid app name); the unix name comes from the app's id. */
export async function makeAppUser(label: string): Promise<TestAppUser> {
  const store = Store.open(':memory:');
  const org = store.orgs.create('test');
  const app = store.apps.create({ orgId: org.id, name: label, type: 'node', region: 'par' });
  const users = new AppUsers(store);
  const user = await ensureRacing(users, app.id);
  leftAtExit.add(user.name);
  if (!registered) {
    registered = true;
    process.once('exit', () => {
      for (const name of leftAtExit) {
        spawnSync('pkill', ['-KILL', '-u', name], { stdio: 'ignore' });
        spawnSync('userdel', [name], { stdio: 'ignore' });
        spawnSync('groupdel', [name], { stdio: 'ignore' });
      }
    });
  }
  return {
    user,
    remove: async () => {
      await users.remove(app.id);
      store.close();
      // userdel refuses a user something still runs as; the exit handler kills it first.
      if (!(await lookupUser(user.name))) leftAtExit.delete(user.name);
    },
  };
}

/**
 * AppUsers.ensure, tried again when another process (a test file running beside this one) took
 * the same free number at the same moment: that number is then taken, so the next try skips it.
 * What a failed try left under this app's own name is removed first.
 */
async function ensureRacing(users: AppUsers, appId: string): Promise<AppIdentity> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await users.ensure(appId);
    } catch (error) {
      if (attempt === 3) throw error;
      const name = userNameFor(appId);
      spawnSync('userdel', [name], { stdio: 'ignore' });
      spawnSync('groupdel', [name], { stdio: 'ignore' });
    }
  }
}
