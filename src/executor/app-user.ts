/**
 * Unix users as the daemon sees them: looking one (or a group) up through NSS, and the useradd argv of a
 * system account. Each application's own user is made by src/sandbox/app-users.ts (numbered from
 * a range, recorded in the store); the add-on servers' account by src/addons/system-user.ts.
 */
import { runCommand } from './run-command.js';

export interface UnixUser {
  uid: number;
  gid: number;
  name: string;
}

const SYSTEM_PATH = '/usr/sbin:/usr/bin:/sbin:/bin';
/** POSIX-portable user names as useradd accepts them by default. */
const USER_NAME = /^[a-z_][a-z0-9_-]{0,31}$/;

/** useradd's options for a user nobody logs in as: no home folder, no shell, a comment saying whose. */
function withoutLogin(comment: string): string[] {
  return ['--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', '--comment', comment];
}

/** argv of useradd for a system user without login shell or home directory. */
export function useraddArgv(name: string, comment: string): string[] {
  return ['useradd', '--system', '--user-group', ...withoutLogin(comment), name];
}

/** argv of groupadd for a system group of a given id. */
export function groupaddArgv(name: string, id: number): string[] {
  return ['groupadd', '--system', '--gid', String(id), name];
}

/** argv of useradd for a system user of a given uid, in the group of the same id, without login shell or home. */
export function numberedUseraddArgv(name: string, id: number, comment: string): string[] {
  return ['useradd', '--system', '--no-log-init', '--uid', String(id), '--gid', String(id), ...withoutLogin(comment), name];
}

/** A group's number, looked up through NSS as users are; undefined when there is no such group. */
export async function lookupGroupId(name: string): Promise<number | undefined> {
  const line = await getentLine('group', name);
  if (line === undefined) return undefined;
  const gid = Number(line.split(':')[2]);
  if (!Number.isInteger(gid)) throw new Error(`Unexpected getent output for group ${JSON.stringify(name)}: ${JSON.stringify(line)}`);
  return gid;
}

/** Looks a user up through NSS (so users from /etc/passwd and directory services both count). */
export async function lookupUser(name: string): Promise<UnixUser | undefined> {
  const line = await getentLine('passwd', name);
  if (line === undefined) return undefined;
  const fields = line.split(':');
  const uid = Number(fields[2]);
  const gid = Number(fields[3]);
  if (fields[0] !== name || !Number.isInteger(uid) || !Number.isInteger(gid)) {
    throw new Error(`Unexpected getent output for user ${JSON.stringify(name)}: ${JSON.stringify(line)}`);
  }
  return { uid, gid, name };
}

/** The entry of `name` in an NSS database, as getent prints it; undefined when there is none. */
async function getentLine(database: 'passwd' | 'group', name: string): Promise<string | undefined> {
  if (!USER_NAME.test(name)) throw new Error(`Invalid ${database === 'passwd' ? 'user' : 'group'} name ${JSON.stringify(name)}.`);
  const lines: string[] = [];
  const r = await runCommand({
    argv: ['getent', database, name],
    cwd: '/',
    env: { PATH: SYSTEM_PATH, LC_ALL: 'C' },
    onLine: (stream, line) => stream === 'out' && lines.push(line),
    timeoutMs: 10_000,
  });
  if (r.exitCode === 2) return undefined; // key not found
  if (r.exitCode !== 0) throw new Error(`getent ${database} ${name} failed (${r.exitCode ?? r.signal}); check NSS configuration.`);
  return lines[0] ?? '';
}
