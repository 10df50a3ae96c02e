/**
 * One unix user (and group of the same name and number) per Redis add-on, so no add-on's server
 * can read another's data folder or signal another's process. Numbers come from a range of
 * their own (default 2200000-2299999, apart from the applications' 2000000-2099999), like the
 * applications' users (src/sandbox/app-users.ts); the record is the user database itself: the
 * name follows from the add-on id, and a user missing after a host was reinstalled is made
 * again and given the folder (redis-provider.ts migrates its ownership).
 */
import { createHash } from 'node:crypto';
import { groupaddArgv, lookupUser, numberedUseraddArgv } from '../../executor/app-user.js';
import type { SystemUser } from '../system-user.js';
import { runSystemTool } from '../../executor/system-tools.js';

export interface IdRange {
  first: number;
  last: number;
}

export const DEFAULT_REDIS_UID_RANGE: IdRange = { first: 2_200_000, last: 2_299_999 };
/** Each PostgreSQL add-on's server (postgresql/addon-servers.ts) gets one the same way, `slp-…`. */
export const DEFAULT_POSTGRESQL_UID_RANGE: IdRange = { first: 2_300_000, last: 2_399_999 };

/** Whose users a set of server users is: the name's prefix and the kind, for messages. */
export interface ServerUserKind {
  prefix: 'slr-' | 'slp-';
  label: 'Redis' | 'PostgreSQL';
}

export const REDIS_SERVER_USERS: ServerUserKind = { prefix: 'slr-', label: 'Redis' };
export const POSTGRESQL_SERVER_USERS: ServerUserKind = { prefix: 'slp-', label: 'PostgreSQL' };

/**
 * The unix name of a Redis add-on's server: `slr-` and the first 12 hex digits of its id
 * (`addon_<uuid>`), or of the id's SHA-256 for ids of another form.
 */
export function redisUserName(addonId: string): string {
  return serverUserName(REDIS_SERVER_USERS, addonId);
}

export function serverUserName(kind: ServerUserKind, addonId: string): string {
  const hex = /^addon_([0-9a-f]{8})-([0-9a-f]{4})/.exec(addonId);
  return `${kind.prefix}${hex ? `${hex[1]}${hex[2]}` : createHash('sha256').update(addonId).digest('hex').slice(0, 12)}`;
}

/** The lowest number of the range that neither a user nor a group has. */
export function firstFreeId(range: IdRange, used: ReadonlySet<number>): number | undefined {
  for (let id = range.first; id <= range.last; id++) if (!used.has(id)) return id;
  return undefined;
}

/** The numbers (third field) of `getent passwd` or `getent group` output. */
export function idsOf(getentOutput: string[]): Set<number> {
  const ids = new Set<number>();
  for (const line of getentOutput) {
    const id = Number(line.split(':')[2]);
    if (Number.isInteger(id)) ids.add(id);
  }
  return ids;
}

export function redisUseraddArgv(name: string, id: number, addonId: string, kind: ServerUserKind = REDIS_SERVER_USERS): string[] {
  return numberedUseraddArgv(name, id, `slipway ${kind.label} add-on ${addonId}`);
}

/** useradd and groupadd: the uid or gid is taken. */
const ID_IN_USE = 4;

export class RedisServerUsers {
  /** One change of /etc/passwd at a time. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly range: IdRange = DEFAULT_REDIS_UID_RANGE,
    private readonly kind: ServerUserKind = REDIS_SERVER_USERS,
  ) {}

  /** The add-on's server user, created when missing. */
  ensure(addonId: string): Promise<SystemUser> {
    return this.serial(async () => {
      const name = serverUserName(this.kind, addonId);
      const existing = await lookupUser(name);
      if (existing) return existing;
      // Another daemon on this machine may take the same number meanwhile: then the next one.
      for (let attempt = 1; ; attempt++) {
        const used = new Set([...idsOf(await getent('passwd')), ...idsOf(await getent('group'))]);
        const id = firstFreeId(this.range, used);
        if (id === undefined) {
          throw new Error(`No free uid left in ${this.range.first}-${this.range.last} for a new ${this.kind.label} add-on's server user.`);
        }
        const group = await runSystemTool(groupaddArgv(name, id));
        // groupadd and useradd exit 4 when the number is taken (useradd says "not unique").
        if (group.exitCode !== 0 && attempt < 5 && (group.exitCode === ID_IN_USE || /already exists/.test(group.err.join(' ')))) {
          if (await lookupUser(name)) break;
          continue;
        }
        if (group.exitCode !== 0) {
          throw new Error(
            `Could not create the group ${name}: ${group.err.join(' ').trim() || `exit ${group.exitCode}`}. Check that the daemon runs as root.`,
          );
        }
        const user = await runSystemTool(redisUseraddArgv(name, id, addonId, this.kind));
        if (
          user.exitCode !== 0 &&
          attempt < 5 &&
          (user.exitCode === ID_IN_USE || /already exists|in use|not unique/.test(user.err.join(' ')))
        ) {
          await runSystemTool(['groupdel', name]);
          continue;
        }
        if (user.exitCode !== 0) {
          throw new Error(
            `Could not create the user ${name}: ${user.err.join(' ').trim() || `exit ${user.exitCode}`}. Check that the daemon runs as root.`,
          );
        }
        break;
      }
      const created = await lookupUser(name);
      if (!created) throw new Error(`useradd reported success but ${name} is still unknown to getent passwd.`);
      return created;
    });
  }

  /** Removes the add-on's user and group (the add-on was deleted); gone already is fine. */
  remove(addonId: string): Promise<void> {
    return this.serial(async () => {
      const name = serverUserName(this.kind, addonId);
      if (!(await lookupUser(name))) return;
      await check(['userdel', name], `remove the user ${name}`);
      await runSystemTool(['groupdel', name]); // userdel removes it already where USERGROUPS_ENAB is on
    });
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

async function getent(database: 'passwd' | 'group'): Promise<string[]> {
  const r = await runSystemTool(['getent', database]);
  if (r.exitCode !== 0) throw new Error(`getent ${database} failed (exit ${r.exitCode}).`);
  return r.out;
}

async function check(argv: string[], what: string): Promise<void> {
  const r = await runSystemTool(argv);
  if (r.exitCode !== 0) {
    throw new Error(`Could not ${what}: ${r.err.join(' ').trim() || `${argv[0]} exit ${r.exitCode}`}. Check that the daemon runs as root.`);
  }
}
