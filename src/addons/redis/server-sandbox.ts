import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { SandboxCgroups, SandboxLimits } from '../../sandbox/cgroups.js';
import type { RedisPlanLimits } from '../plan-limits.js';
import type { SystemUser } from '../system-user.js';

/**
 * The sandbox of one Redis add-on's server, the lighter kind the backups' throw-away servers
 * use (src/backups/scratch-server.ts) plus a control group: its own unix user, no capabilities
 * and no way to gain any (no_new_privs, empty bounding set), IPC and host name namespaces of its
 * own, and a control group holding the plan's memory and process limits. It keeps the host's
 * network (apps reach it at the gateway) and the host's mounts (a mount namespace would pin
 * whatever was mounted when it started). No process sits between the daemon and redis-server:
 * unshare and setpriv exec it, so the pid started is the server's, which is what the pid file
 * says and what the next daemon adopts.
 */
export function sandboxedArgv(user: { uid: number; gid: number }, argv: string[]): string[] {
  return [
    'unshare',
    '--ipc',
    '--uts',
    '--',
    'setpriv',
    `--reuid=${user.uid}`,
    `--regid=${user.gid}`,
    '--clear-groups',
    '--no-new-privs',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--',
    ...argv,
  ];
}

/** The control group's name for an add-on: `redis-` and its id's uuid (or its SHA-256 for other ids). */
export function redisGroupName(addonId: string): string {
  const m = /^addon_([0-9a-f-]{36})$/.exec(addonId);
  return `redis-${m ? m[1] : createHash('sha256').update(addonId).digest('hex').slice(0, 40)}`;
}

/** A group for one throw-away copy of the add-on's server: its own group's name and a random tail. */
export function scratchGroupName(addonId: string, tail = randomBytes(4).toString('hex')): string {
  if (!/^[0-9a-f]{8}$/.test(tail)) throw new Error('A scratch group tail is 8 hex digits.');
  return `${redisGroupName(addonId)}-s${tail}`;
}

/** The plan's limits as the control group's. */
export function groupLimits(plan: RedisPlanLimits): SandboxLimits {
  return { memoryBytes: plan.memoryBytes, pids: plan.pids, cpuShares: 1024 };
}

/**
 * Whether `pid` runs in the add-on's group (`<root>/<group>/run`) and as its user: a server left
 * by a daemon from before per-add-on sandboxes (one shared user, no group) does not, and is
 * restarted in its sandbox.
 */
export function runsInSandbox(pid: number, cgroups: SandboxCgroups, group: string, user: SystemUser): boolean {
  try {
    const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    if (Number(uid) !== user.uid) return false;
    const wanted = `/${cgroups.root}/${group}/run`;
    const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n');
    // v1: the memory hierarchy's line (`4:memory:/path`); v2: the unified one (`0::/path`).
    const line = lines.find((l) => (cgroups.layout === 'v2' ? l.startsWith('0::') : /^\d+:([^:]*,)?memory(,[^:]*)?:/.test(l)));
    return line?.slice(line.indexOf(':', line.indexOf(':') + 1) + 1).endsWith(wanted) === true;
  } catch {
    return false;
  }
}
