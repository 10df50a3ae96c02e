import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { redisUserName } from '../../src/addons/redis/server-users.js';
import { bucketGroupName } from '../../src/addons/fs-bucket/bucket-names.js';
import { mountsUnder } from '../../src/storage/mount-table.js';

const dataDirs = new Set<string>();
/** The data folders the harness made itself (not a folder a test made and cleans up). */
const ownFolders = new Set<string>();
let registered = false;

/**
 * Test daemons live in throw-away data folders, but the unix users they create for their apps
 * and their Redis add-ons are the machine's: when the test process ends, the users recorded in each test store go too.
 * So does any data plane a test left running (a test that failed before its daemon's
 * `system stop`): its sandboxes, the router's supervisor and HAProxy, the add-on servers. Left
 * alone they would serve on, and a later test's app given the same uid would see them.
 */
export function removeAppUsersAtExit(dataDir: string, options: { removeFolder?: boolean } = {}): void {
  dataDirs.add(dataDir);
  if (options.removeFolder) ownFolders.add(dataDir);
  if (registered) return;
  registered = true;
  process.once('exit', () => {
    for (const dir of dataDirs) {
      removeUsersOf(dir);
      // A data folder holds app filesystems of hundreds of megabytes: one per daemon would
      // fill the disk over a few runs. It goes once nothing is mounted in it any more (a
      // folder still holding a mount is left, and the run's end names it).
      if (ownFolders.has(dir) && nothingMountedUnder(dir)) {
        rmSync(dir, { recursive: true, force: true });
        // What the daemon keeps beside its data folder: the default backup folder, the secrets key.
        rmSync(`${dir}-backups`, { recursive: true, force: true });
        rmSync(`${dir}.secrets-key`, { force: true });
      }
    }
  });
}

function nothingMountedUnder(dir: string): boolean {
  try {
    return mountsUnder(readFileSync('/proc/self/mountinfo', 'utf8'), dir).length === 0;
  } catch {
    return false;
  }
}

function removeUsersOf(dir: string): void {
  const path = join(dir, 'slipway.db');
  if (!existsSync(path)) return;
  let names: string[] = [];
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    names = (db.prepare('SELECT name FROM app_users').all() as Array<{ name: string }>).map((r) => r.name);
    // Each Redis add-on's server has a user of its own too (named after the add-on).
    const redis = db.prepare("SELECT id FROM addons WHERE provider = 'redis'").all() as Array<{ id: string }>;
    names.push(...redis.map((r) => redisUserName(r.id)));
    // Each FS bucket has a group of its own.
    const buckets = db.prepare("SELECT id FROM addons WHERE provider = 'fs-bucket'").all() as Array<{ id: string }>;
    names.push(...buckets.map((b) => bucketGroupName(b.id)));
    db.close();
  } catch {
    return;
  }
  endDataPlane(dir);
  for (const name of names) {
    if (!/^sl[wrb]-[0-9a-f]{12}$/.test(name)) continue;
    spawnSync('pkill', ['-KILL', '-u', name], { stdio: 'ignore' });
    spawnSync('userdel', [name], { stdio: 'ignore' });
    spawnSync('groupdel', [name], { stdio: 'ignore' });
  }
}

/**
 * Kills the sandboxes runc knows in the folder and every process whose command line names it,
 * then unmounts the apps' filesystems under it (their loop devices are freed with them).
 */
function endDataPlane(dir: string): void {
  const root = join(dir, 'runc');
  if (existsSync(root)) {
    const listed = spawnSync('runc', ['--root', root, 'list', '-q'], { encoding: 'utf8' });
    for (const id of (listed.stdout ?? '').split('\n').filter(Boolean)) {
      spawnSync('runc', ['--root', root, 'kill', id, 'KILL'], { stdio: 'ignore' });
      spawnSync('runc', ['--root', root, 'delete', '--force', id], { stdio: 'ignore' });
    }
  }
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(`${dir}/`)) process.kill(Number(entry), 'SIGKILL');
    } catch {
      // ended meanwhile
    }
  }
  let mounts: string[] = [];
  try {
    mounts = mountsUnder(readFileSync('/proc/self/mountinfo', 'utf8'), dir);
  } catch {
    return;
  }
  for (const mountPoint of mounts) spawnSync('umount', ['-l', mountPoint], { stdio: 'ignore' });
}
