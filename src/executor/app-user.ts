import { runCommand } from './run-command.js';

export interface AppUser {
  uid: number;
  gid: number;
  name: string;
}

const SYSTEM_PATH = '/usr/sbin:/usr/bin:/sbin:/bin';
/** POSIX-portable user names as useradd accepts them by default. */
const USER_NAME = /^[a-z_][a-z0-9_-]{0,31}$/;
/** useradd: "username already in use"; another caller created it first. */
const USERADD_NAME_IN_USE = 9;

const pending = new Map<string, Promise<AppUser>>();

/**
 * Returns the unprivileged system user apps and builds run as, creating it when missing:
 * no login shell, no home directory, its own group. Idempotent; concurrent calls in this
 * process share one attempt, and a race with another process (useradd exit 9, or a held
 * passwd lock) is settled by looking the user up again.
 */
export function ensureAppUser(name = 'slipway-app'): Promise<AppUser> {
  if (!USER_NAME.test(name)) {
    return Promise.reject(
      new Error(
        `Invalid app user name ${JSON.stringify(name)}: use lower-case letters, digits, '_' or '-', starting with a letter or '_', at most 32 characters.`,
      ),
    );
  }
  let p = pending.get(name);
  if (!p) {
    p = createIfMissing(name)
      .then(refuseRoot)
      .finally(() => pending.delete(name));
    pending.set(name, p);
  }
  return p;
}

/** Apps must never run with root's uid or gid, whatever the configured name says. */
function refuseRoot(user: AppUser): AppUser {
  if (user.uid === 0 || user.gid === 0) {
    throw new Error(
      `The app user ${JSON.stringify(user.name)} has uid ${user.uid} and gid ${user.gid}; apps must not run as root. Configure another user name.`,
    );
  }
  return user;
}

async function createIfMissing(name: string): Promise<AppUser> {
  const existing = await lookupUser(name);
  if (existing) return existing;

  let lastError = '';
  for (let attempt = 0; attempt < 5; attempt++) {
    const stderr: string[] = [];
    const r = await runCommand({
      argv: useraddArgv(name),
      cwd: '/',
      env: { PATH: SYSTEM_PATH, LC_ALL: 'C' },
      onLine: (stream, line) => stream === 'err' && stderr.push(line),
      timeoutMs: 30_000,
    });
    const found = await lookupUser(name);
    if (found) return found;
    lastError = stderr.join(' ').trim() || `exit code ${r.exitCode}`;
    if (r.exitCode !== USERADD_NAME_IN_USE) await new Promise((res) => setTimeout(res, 200 * (attempt + 1)));
  }
  throw new Error(
    `Could not create the app user ${JSON.stringify(name)} with useradd: ${lastError}. ` +
      'Check that the daemon runs as root and that useradd (Debian package passwd) is installed.',
  );
}

/** argv of useradd for a system user without login shell or home directory. */
export function useraddArgv(name: string, comment = 'slipway applications'): string[] {
  return [
    'useradd',
    '--system',
    '--user-group',
    '--no-create-home',
    '--home-dir',
    '/nonexistent',
    '--shell',
    '/usr/sbin/nologin',
    '--comment',
    comment,
    name,
  ];
}

/** Looks a user up through NSS (so users from /etc/passwd and directory services both count). */
export async function lookupUser(name: string): Promise<AppUser | undefined> {
  if (!USER_NAME.test(name)) throw new Error(`Invalid user name ${JSON.stringify(name)}.`);
  const lines: string[] = [];
  const r = await runCommand({
    argv: ['getent', 'passwd', name],
    cwd: '/',
    env: { PATH: SYSTEM_PATH, LC_ALL: 'C' },
    onLine: (stream, line) => stream === 'out' && lines.push(line),
    timeoutMs: 10_000,
  });
  if (r.exitCode === 2) return undefined; // key not found
  if (r.exitCode !== 0) throw new Error(`getent passwd ${name} failed (${r.exitCode ?? r.signal}); check NSS configuration.`);
  const fields = (lines[0] ?? '').split(':');
  const uid = Number(fields[2]);
  const gid = Number(fields[3]);
  if (fields[0] !== name || !Number.isInteger(uid) || !Number.isInteger(gid)) {
    throw new Error(`Unexpected getent output for user ${JSON.stringify(name)}: ${JSON.stringify(lines[0] ?? '')}`);
  }
  return { uid, gid, name };
}
