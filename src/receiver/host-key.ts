import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
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
    const pair = utils.generateKeyPairSync('ed25519', { comment: 'slipway git receiver' });
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    try {
      await writeFile(path, pair.private, { mode: 0o600, flag: 'wx' });
      await writeFile(`${path}.pub`, `${pair.public}\n`, { mode: 0o644 });
    } catch (error) {
      // Another process created it between our read and write: use theirs.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
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

async function readIfPresent(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}
