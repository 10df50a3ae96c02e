/**
 * One unix user (and group of the same name and number) per application: its builds,
 * instances and one-off commands run as it, and its folders belong to it, so no app can read,
 * signal or write what belongs to another. Numbers come from a documented range (default
 * 2000000-2099999, above the system, login and systemd dynamic ranges and above the usual
 * subordinate id ranges of the first users), are recorded in the store, kept across daemon
 * restarts and given back when the app is deleted.
 */
import type { Store } from '../store/store.js';
import { runCommand } from '../executor/run-command.js';
import { groupaddArgv, lookupGroupId, lookupUser, numberedUseraddArgv } from '../executor/app-user.js';
import { endProcessesOfUser } from '../executor/user-processes.js';
import { SYSTEM_TOOL_ENV } from '../executor/system-tools.js';

export interface AppIdentity {
  name: string;
  uid: number;
  gid: number;
}

export interface UidRange {
  first: number;
  last: number;
}

export const DEFAULT_APP_UID_RANGE: UidRange = { first: 2_000_000, last: 2_099_999 };
/** useradd and groupadd: "UID/GID already in use". */
const ID_IN_USE = 4;
/** useradd and groupadd: "name already in use". */
const NAME_IN_USE = 9;
/** userdel and groupdel: "the user (group) does not exist". */
const NOT_THERE = 6;

/** `2000000-2099999` (from a flag or SLIPWAY_APP_UIDS) to a range, refusing what would be unsafe. */
export function parseUidRange(text: string | undefined): UidRange {
  if (text === undefined || text === '') return DEFAULT_APP_UID_RANGE;
  const m = /^(\d+)-(\d+)$/.exec(text.trim());
  const first = Number(m?.[1]);
  const last = Number(m?.[2]);
  if (!m || first < 65_536 || last < first || last > 4_294_967_294) {
    throw new Error(
      `Invalid application uid range ${JSON.stringify(text)}: write <first>-<last>, both above 65535 (below are system and login users), e.g. 2000000-2099999.`,
    );
  }
  return { first, last };
}

/** The unix name of an app's user: `slw-` and the first 12 hex digits of its id. */
export function userNameFor(appId: string): string {
  const hex = /^app_([0-9a-f]{8})-([0-9a-f]{4})/.exec(appId);
  if (!hex) throw new Error(`Not an app id: ${JSON.stringify(appId)}.`);
  return `slw-${hex[1]}${hex[2]}`;
}

export { groupaddArgv };

export function useraddArgv(name: string, id: number, appId: string): string[] {
  return numberedUseraddArgv(name, id, `slipway application ${appId}`);
}

/** The app's user could not be removed: it stays, with its number, and the reason is said. */
export class AppUserRemovalError extends Error {
  constructor(
    readonly userName: string,
    readonly uid: number,
    /** Why, in words that quote nothing the tools printed. */
    readonly reason: string,
    /** What userdel or groupdel printed, for the daemon's own log only. */
    readonly output = '',
  ) {
    super(`The unix user ${userName} (uid ${uid}) could not be removed: ${reason}.`);
  }
}

export class AppUsers {
  /** One change of /etc/passwd at a time. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly range: UidRange = DEFAULT_APP_UID_RANGE,
  ) {}

  /** The app's user, created (and recorded) when missing. */
  ensure(appId: string): Promise<AppIdentity> {
    return this.serial(() => this.ensureNow(appId));
  }

  /**
   * Removes the app's user and group and frees its number, once no process runs as it any more:
   * those still there after `waitMs` are killed. Throws an `AppUserRemovalError` (and keeps the
   * user and its number) when a process outlived that or userdel or groupdel failed.
   */
  remove(appId: string, o: { waitMs?: number; killWaitMs?: number } = {}): Promise<void> {
    return this.serial(async () => {
      const row = this.store.appUsers.forApp(appId);
      if (!row) return;
      const left = await endProcessesOfUser(row.uid, { waitMs: o.waitMs ?? 10_000, killWaitMs: o.killWaitMs ?? 5_000 });
      if (left.length > 0) {
        throw new AppUserRemovalError(
          row.name,
          row.uid,
          `${left.length} process(es) of uid ${row.uid} still ran after SIGKILL`,
          `pids ${left.slice(0, 20).join(', ')}`,
        );
      }
      const user = await run(['userdel', row.name]);
      if (user.exitCode !== 0 && user.exitCode !== NOT_THERE) {
        throw new AppUserRemovalError(row.name, row.uid, `userdel exited with ${user.exitCode ?? 'a signal'}`, user.stderr);
      }
      const group = await run(['groupdel', row.name]);
      if (group.exitCode !== 0 && group.exitCode !== NOT_THERE) {
        throw new AppUserRemovalError(row.name, row.uid, `groupdel exited with ${group.exitCode ?? 'a signal'}`, group.stderr);
      }
      this.store.appUsers.forget(appId);
    });
  }

  /** The recorded identity, without creating anything (undefined before the first ensure). */
  known(appId: string): AppIdentity | undefined {
    const row = this.store.appUsers.forApp(appId);
    return row ? { name: row.name, uid: row.uid, gid: row.uid } : undefined;
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async ensureNow(appId: string): Promise<AppIdentity> {
    const row = this.store.appUsers.forApp(appId);
    if (row) {
      const existing = await lookupUser(row.name);
      if (existing?.uid === row.uid) return { name: row.name, uid: row.uid, gid: existing.gid };
      // Recorded but gone from this machine (restored store, reinstalled host): make it again.
      if ((await this.create(row.name, row.uid, appId)) === 'taken') {
        throw new Error(
          `The uid ${row.uid} recorded for ${row.name} belongs to another user or group of this machine; free it or restore the store on a machine where it is free.`,
        );
      }
      return { name: row.name, uid: row.uid, gid: row.uid };
    }
    const name = userNameFor(appId);
    const used = this.store.appUsers.usedIds();
    for (let id = this.range.first; id <= this.range.last; id++) {
      if (used.has(id)) continue;
      const created = await this.tryCreate(name, id, appId);
      if (created === 'taken') continue;
      this.store.appUsers.record({ app_id: appId, name, uid: id });
      return { name, uid: id, gid: id };
    }
    throw new Error(
      `No free uid left in ${this.range.first}-${this.range.last} for a new application user. Delete unused applications or start the daemon with a larger --app-uids range.`,
    );
  }

  /** 'taken' when another user or group already has that number. */
  private async tryCreate(name: string, id: number, appId: string): Promise<'created' | 'taken'> {
    if ((await run(['getent', 'passwd', String(id)])).exitCode === 0) return 'taken';
    if ((await run(['getent', 'group', String(id)])).exitCode === 0) return 'taken';
    const existing = await lookupUser(name);
    if (existing) {
      // Left by an earlier store of this machine for the same app id: take it over only if
      // its numbers are what we would give it.
      if (existing.uid === id && existing.gid === id) return 'created';
      throw new Error(
        `A unix user named ${name} already exists with another uid; remove it (userdel ${name}) or change the application uid range.`,
      );
    }
    return this.create(name, id, appId);
  }

  /**
   * 'taken' when another daemon of this machine took the number between the look and the
   * creation (the group or the user then says the id is in use): the caller tries the next one.
   */
  private async create(name: string, id: number, appId: string): Promise<'created' | 'taken'> {
    let group = await run(groupaddArgv(name, id));
    if (group.exitCode === NAME_IN_USE && (await lookupGroupId(name)) !== id) {
      // The name follows from the app's id: a group of it with another number is this app's
      // own, left by an attempt whose user was never made (a daemon stopped between groupadd
      // and useradd, or a number taken by another daemon meanwhile). Taken as it is, useradd
      // would find no group of this number; it goes, and the number is tried again.
      await this.removeLeftGroup(name, id);
      group = await run(groupaddArgv(name, id));
    }
    if (group.exitCode === ID_IN_USE) return 'taken';
    if (group.exitCode !== 0 && group.exitCode !== NAME_IN_USE) {
      throw new Error(`Could not create the group ${name} (gid ${id}): ${group.stderr || `groupadd exit ${group.exitCode}`}.`);
    }
    const user = await run(useraddArgv(name, id, appId));
    if (user.exitCode === ID_IN_USE) {
      if (group.exitCode === 0) await run(['groupdel', name]);
      return 'taken';
    }
    if (user.exitCode !== 0 && user.exitCode !== NAME_IN_USE) {
      throw new Error(
        `Could not create the user ${name} (uid ${id}): ${user.stderr || `useradd exit ${user.exitCode}`}. Check that the daemon runs as root.`,
      );
    }
    return 'created';
  }

  private async removeLeftGroup(name: string, id: number): Promise<void> {
    const removed = await run(['groupdel', name]);
    if (removed.exitCode !== 0 && removed.exitCode !== NOT_THERE) {
      throw new Error(
        `A group named ${name} is left on this machine with another gid than ${id}, and groupdel could not remove it (${removed.stderr || `exit ${removed.exitCode}`}): remove it (groupdel ${name}) and deploy again.`,
      );
    }
  }
}

async function run(argv: string[]): Promise<{ exitCode: number | null; stderr: string }> {
  const err: string[] = [];
  const r = await runCommand({ argv, cwd: '/', env: SYSTEM_TOOL_ENV, timeoutMs: 30_000, onLine: (s, l) => s === 'err' && err.push(l) });
  return { exitCode: r.exitCode, stderr: err.join(' ').trim() };
}
