/**
 * One unix group per FS bucket, `slb-<12 hex digits of the add-on id>`, numbered from
 * 2400000-2499999 (apart from the apps' users and the add-on servers'). The bucket's top folder
 * belongs to it (setgid, so everything made inside does too), and every sandbox of an app linked
 * to the bucket holds it besides the app's own group: apps of different users share the files.
 * The group database is the record: the name follows from the id, a group missing after a host
 * was reinstalled is made again (the next mount gives it the top folder).
 */
import { runCommand } from '../../executor/run-command.js';
import { groupaddArgv, lookupGroupId } from '../../executor/app-user.js';
import { firstFreeId, idsOf, type IdRange } from '../redis/server-users.js';
import { bucketGroupName } from './bucket-names.js';
import { SYSTEM_TOOL_ENV } from '../../executor/system-tools.js';

export const DEFAULT_BUCKET_GID_RANGE: IdRange = { first: 2_400_000, last: 2_499_999 };

export class BucketGroups {
  /** One change of /etc/group at a time. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly range: IdRange = DEFAULT_BUCKET_GID_RANGE) {}

  /** The bucket's group number, the group made when missing. */
  ensure(addonId: string): Promise<number> {
    return this.serial(async () => {
      const name = bucketGroupName(addonId);
      const existing = await lookupGroupId(name);
      if (existing !== undefined) return existing;
      // Another daemon on this machine may take the same number meanwhile: then the next one.
      for (let attempt = 1; attempt <= 5; attempt++) {
        const used = new Set([...idsOf(await getent('passwd')), ...idsOf(await getent('group'))]);
        const id = firstFreeId(this.range, used);
        if (id === undefined) throw new Error(`No free gid left in ${this.range.first}-${this.range.last} for a new FS bucket's group.`);
        const made = await run(groupaddArgv(name, id));
        if (made.exitCode === 0) break;
        if (attempt < 5 && /already exists/.test(made.err.join(' '))) continue;
        throw new Error(
          `Could not create the group ${name}: ${made.err.join(' ').trim() || `exit ${made.exitCode}`}. Check that the daemon runs as root.`,
        );
      }
      const gid = await lookupGroupId(name);
      if (gid === undefined) throw new Error(`groupadd reported success but ${name} is still unknown to getent group.`);
      return gid;
    });
  }

  /** The group number when the group exists (no change made). */
  lookup(addonId: string): Promise<number | undefined> {
    return lookupGroupId(bucketGroupName(addonId));
  }

  /** Removes the bucket's group (the add-on was deleted); gone already is fine. */
  remove(addonId: string): Promise<void> {
    return this.serial(async () => {
      const name = bucketGroupName(addonId);
      if ((await lookupGroupId(name)) === undefined) return;
      const removed = await run(['groupdel', name]);
      if (removed.exitCode !== 0)
        throw new Error(`Could not remove the group ${name}: ${removed.err.join(' ').trim() || `exit ${removed.exitCode}`}.`);
    });
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

async function getent(database: 'passwd' | 'group'): Promise<string[]> {
  const r = await run(['getent', database]);
  if (r.exitCode !== 0) throw new Error(`getent ${database} failed (exit ${r.exitCode}).`);
  return r.out;
}

async function run(argv: string[]): Promise<{ exitCode: number | null; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const r = await runCommand({
    argv,
    cwd: '/',
    env: SYSTEM_TOOL_ENV,
    timeoutMs: 30_000,
    onLine: (stream, line) => (stream === 'out' ? out : err).push(line),
  });
  return { exitCode: r.exitCode, out, err };
}
