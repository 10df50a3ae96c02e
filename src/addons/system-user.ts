import { useraddArgv as systemUseraddArgv } from '../executor/app-user.js';
import { runChecked } from '../executor/run-captured.js';

export interface SystemUser {
  name: string;
  uid: number;
  gid: number;
}

/** argv that creates an unprivileged system account with no home and no login shell. */
export function useraddArgv(name: string): string[] {
  assertUserName(name);
  return systemUseraddArgv(name, 'slipway add-on servers');
}

function assertUserName(name: string): void {
  if (!/^[a-z_][a-z0-9_-]{0,30}$/.test(name)) {
    throw new Error(`"${name}" is not a valid system user name (lower-case letters, digits, "_" and "-").`);
  }
}

/** Parses one `getent passwd` line: name:x:uid:gid:... */
export function parsePasswdLine(line: string): SystemUser | undefined {
  const fields = line.trim().split(':');
  if (fields.length < 4) return undefined;
  const uid = Number(fields[2]);
  const gid = Number(fields[3]);
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) return undefined;
  return { name: fields[0]!, uid, gid };
}

async function lookup(name: string): Promise<SystemUser | undefined> {
  try {
    const { stdout } = await runChecked(['getent', 'passwd', name]);
    return parsePasswdLine(stdout);
  } catch {
    return undefined; // getent exits 2 when the user does not exist
  }
}

const pending = new Map<string, Promise<SystemUser>>();

/**
 * Returns the account, creating it first if missing. Servers such as PostgreSQL refuse to
 * run as root, and an add-on server should not be able to touch slipway's own files anyway.
 */
export function ensureSystemUser(name: string): Promise<SystemUser> {
  let result = pending.get(name);
  if (!result) {
    result = ensure(name).finally(() => pending.delete(name));
    pending.set(name, result);
  }
  return result;
}

async function ensure(name: string): Promise<SystemUser> {
  const existing = await lookup(name);
  if (existing) return existing;
  try {
    await runChecked(useraddArgv(name));
  } catch (err) {
    // Another process may have created it in the meantime.
    const raced = await lookup(name);
    if (raced) return raced;
    const detail = err instanceof Error ? err.message : String(err);
    throw new Error(
      `Could not create the system user "${name}" for add-on servers: ${detail}. ` +
        `slipway must run as root to create it, or create it yourself: ${useraddArgv(name).join(' ')}`,
    );
  }
  const created = await lookup(name);
  if (!created) throw new Error(`useradd reported success but "${name}" is still unknown to getent passwd.`);
  return created;
}
