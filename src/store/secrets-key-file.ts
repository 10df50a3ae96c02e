/**
 * The secrets key's file: 32 random bytes as 64 hex digits, mode 0600, root's, beside the data
 * folder (`/var/lib/slipway` → `/var/lib/slipway.secrets-key`), never inside it. So a copy of
 * the data folder or of the store alone (a disk image, a stray copy, a backup of that folder)
 * holds the secrets sealed, and the key is read by root only. docs/security.md says why here.
 *
 * A rotation writes the new key to `<file>.new` first, re-seals every value in one transaction,
 * and only once that committed renames the new file over the old one. A daemon stopped between
 * the commit and the rename finds `<file>.new` matching the store at its next start and
 * finishes the rename; one stopped before the commit finds the store still under the old key
 * and removes `<file>.new`. The old key is never gone while a value still needs it.
 */
import { closeSync, constants, fsyncSync, lstatSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { FixableError } from '../core/errors.js';
import { SECRETS_KEY_BYTES, SecretBox } from './secret-box.js';
import { resealSecrets, sealClearSecrets, sealedKeyIds } from './store-secrets.js';
import type { Store } from './store.js';

/** The key file of a data folder: beside it, named after it. */
export function secretsKeyPath(dataDir: string): string {
  const trimmed = dataDir.length > 1 ? dataDir.replace(/\/+$/, '') : dataDir;
  return join(dirname(trimmed), `${basename(trimmed)}.secrets-key`);
}

export class SecretsKeyError extends FixableError {}

/** Reads a key file; undefined when there is none. Refuses a link, a non-file, a file others may read, a malformed one. */
export function readSecretsKey(file: string): SecretBox | undefined {
  let info: ReturnType<typeof lstatSync>;
  try {
    info = lstatSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  if (!info.isFile()) {
    throw new SecretsKeyError(
      `The secrets key file ${file} is not a regular file.`,
      'Put the key file itself there, not a link or a folder.',
    );
  }
  if ((info.mode & 0o077) !== 0) {
    throw new SecretsKeyError(
      `The secrets key file ${file} can be read or changed by others than its owner (mode ${(info.mode & 0o777).toString(8).padStart(4, '0')}).`,
      `Run \`chmod 600 ${file}\`: whoever reads it reads every secret of the store.`,
    );
  }
  const text = readFileSync(file, 'utf8').replace(/[\r\n]+$/, '');
  if (!new RegExp(`^[0-9a-f]{${SECRETS_KEY_BYTES * 2}}$`).test(text)) {
    // The content is not quoted: it is a key, or close to one.
    throw new SecretsKeyError(
      `The secrets key file ${file} does not hold a key (${SECRETS_KEY_BYTES * 2} hex digits).`,
      'Put back the key file this store was written with (a platform backup holds a copy).',
    );
  }
  return new SecretBox(Buffer.from(text, 'hex'), file);
}

/** Writes a new key file durably with mode 0600; an existing file (or link) at that name is refused. */
function writeKeyFile(file: string, key: Buffer): void {
  const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    writeSync(fd, `${key.toString('hex')}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function syncFolder(path: string): void {
  const fd = openSync(dirname(path), constants.O_RDONLY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function describeIds(ids: Map<string, number>): string {
  return [...ids].map(([id, n]) => `${n} under key id ${id}`).join(', ');
}

/**
 * Gives the store its key at start: reads the key file (made on first start when the store
 * holds nothing sealed), finishes or forgets a rotation a stop interrupted, refuses a key that
 * is missing or is not the one the store's values were sealed with, then seals the values still
 * in clear (a store of an older slipway; safe to run again). Returns how many it sealed.
 */
export function openStoreSecrets(store: Store, file: string): { sealed: number; created: boolean; box: SecretBox } {
  const ids = sealedKeyIds(store.db);
  const pending = `${file}.new`;
  let box = readSecretsKey(file);
  let created = false;
  const others = () => [...ids.keys()].filter((id) => id !== box?.id);
  if (others().length > 0) {
    const next = readSecretsKey(pending);
    if (next && [...ids.keys()].every((id) => id === next.id)) {
      // A rotation committed, then stopped before its rename: finish it.
      renameSync(pending, file);
      syncFolder(file);
      box = readSecretsKey(file);
    } else if (!box) {
      throw new SecretsKeyError(
        `The store holds sealed secrets (${describeIds(ids)}) and their key file ${file} is missing: the daemon cannot read them.`,
        `Put back the key file this store was written with (a platform backup holds a copy) at ${file}, mode 0600, then start again.`,
      );
    } else {
      throw new SecretsKeyError(
        `The secrets key in ${file} (key id ${box.id}) is not the one the store's secrets were sealed with (${describeIds(ids)}).`,
        `Put back the key file this store was written with at ${file}, then start again; nothing was changed.`,
      );
    }
  } else {
    // Nothing sealed under another key: a `.new` left is a rotation that never committed.
    rmSync(pending, { force: true });
  }
  if (!box) {
    const made = SecretBox.generate(file);
    writeKeyFile(file, made.key);
    syncFolder(file);
    box = made.box;
    created = true;
  }
  store.secrets.replace(box);
  return { sealed: sealClearSecrets(store.db, box), created, box };
}

/**
 * Seals every secret with a new key, in one transaction, and only then puts the new key file in
 * place of the old (see the top of this file). The store serves with the new key at once.
 */
export function rotateStoreSecrets(store: Store, file: string): { resealed: number; oldKeyId: string; newKeyId: string } {
  const current = store.secrets.current;
  if (!current) throw new SecretsKeyError('This store was opened without a secrets key: there is nothing to rotate.');
  const pending = `${file}.new`;
  rmSync(pending, { force: true });
  const next = SecretBox.generate(file);
  writeKeyFile(pending, next.key);
  let resealed: number;
  try {
    resealed = resealSecrets(store.db, current, next.box);
  } catch (e) {
    rmSync(pending, { force: true });
    throw e;
  }
  renameSync(pending, file);
  syncFolder(file);
  store.secrets.replace(next.box);
  return { resealed, oldKeyId: current.id, newKeyId: next.box.id };
}
