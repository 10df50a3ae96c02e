import { runChecked } from '../executor/run-captured.js';
import { chmod, link, mkdir, readFile, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { randomBytes } from 'node:crypto';
import ssh2 from 'ssh2';
import { fingerprintOf } from '../core/ssh-public-key.js';

const { utils } = ssh2;

export interface HostKey {
  /** The private key as the SSH server loads it. */
  privateKey: Buffer;
  /** `SHA256:...`, what `ssh` prints when it first meets this server: users compare it. */
  fingerprint: string;
}

/**
 * Loads the SSH host key, creating an ed25519 key (mode 0600, plus a `.pub` beside it) the
 * first time. The key must survive restarts: a new one would make every user's ssh client
 * warn about a changed host identity.
 */
export async function ensureHostKey(path: string): Promise<HostKey> {
  let privateKey = await readIfPresent(path);
  if (privateKey === null) {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await generateHostKey(path);
    privateKey = await readFile(path);
  } else if (((await stat(path)).mode & 0o077) !== 0) {
    // A private key readable by others is not private; tighten it instead of refusing to start.
    await chmod(path, 0o600);
  }
  const parsed = utils.parseKey(privateKey);
  if (parsed instanceof Error || Array.isArray(parsed) || !parsed.isPrivateKey()) {
    const seen = parsed instanceof Error ? parsed.message : 'not a single private key';
    throw new Error(
      `The SSH host key at ${path} could not be loaded (${seen}). ` +
        'Move it away and restart: a new ed25519 key is created when the file is missing.',
    );
  }
  return { privateKey, fingerprint: fingerprintOf(parsed.getPublicSSH()) };
}

/**
 * OpenSSH's own ssh-keygen makes the key: ssh2's generator writes an ed25519 key that its own
 * parser rejects as malformed a few times in a thousand. The key is made under a temporary
 * name and hard-linked into place, so a concurrent start keeps whichever key came first.
 */
async function generateHostKey(path: string): Promise<void> {
  const temporary = `${path}.new-${randomBytes(6).toString('hex')}`;
  try {
    await runChecked(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'slipway git receiver', '-f', temporary]);
    try {
      await link(temporary, path);
      await link(`${temporary}.pub`, `${path}.pub`).catch(() => undefined);
    } catch (error) {
      // Another process created it between our read and our link: use theirs.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  } finally {
    await rm(temporary, { force: true });
    await rm(`${temporary}.pub`, { force: true });
  }
}

async function readIfPresent(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}
