/**
 * Seals the secrets the store keeps (variables, add-on credentials, webhook secrets and URLs,
 * drain URLs and credentials) with a key kept outside the store, so a copy of the SQLite file
 * (a disk image, a stray `cp`, a platform backup in clear) reveals none of them.
 *
 * A sealed value is one line of text, so it fits the TEXT columns that held the clear value:
 *
 *   sw-secret:1:<key id, 16 hex digits>:<base64 of nonce (12 bytes) | ciphertext | tag (16 bytes)>
 *
 * AES-256-GCM with a random nonce per value. The additional data is the row's identity (table,
 * column and the owning ids: `env_vars`, `value`, app id, variable name), so a value copied into
 * another row, another column or another app fails its check instead of being served there.
 * The key id (HMAC of a fixed label under the key) says which key sealed a value without
 * revealing it: a daemon started with another key says so before it reads anything.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { FixableError } from '../core/errors.js';

const PREFIX = 'sw-secret:1:';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
export const SECRETS_KEY_BYTES = 32;

/** Where a value lives: its table, column and the ids that own the row. */
export interface SecretPlace {
  table: string;
  column: string;
  owner: readonly string[];
}

/** A secret that cannot be read: sealed with another key, moved to another row, or altered. */
export class SecretUnreadable extends FixableError {}

export function isSealed(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

/** The key id a sealed value names (undefined for a clear one). */
export function sealedKeyId(stored: string): string | undefined {
  if (!isSealed(stored)) return undefined;
  return stored.slice(PREFIX.length, PREFIX.length + 16);
}

export function secretsKeyId(key: Buffer): string {
  return createHmac('sha256', key).update('slipway secrets key id').digest().subarray(0, 8).toString('hex');
}

function additionalData(place: SecretPlace): Buffer {
  // Length-prefixed parts: no two different places give the same bytes.
  const parts = [place.table, place.column, ...place.owner].map((part) => Buffer.from(part, 'utf8'));
  const out: Buffer[] = [];
  for (const part of parts) {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(part.length);
    out.push(length, part);
  }
  return Buffer.concat(out);
}

function describePlace(place: SecretPlace): string {
  return `${place.table}.${place.column} of ${place.owner.join('/')}`;
}

/** One key: seals values for a place and opens them only there. */
export class SecretBox {
  readonly id: string;

  constructor(
    private readonly key: Buffer,
    /** Where the key was read from, for messages. */
    readonly source: string,
  ) {
    if (key.length !== SECRETS_KEY_BYTES) throw new Error(`A secrets key is ${SECRETS_KEY_BYTES} bytes, not ${key.length}.`);
    this.id = secretsKeyId(key);
  }

  static generate(source: string): { box: SecretBox; key: Buffer } {
    const key = randomBytes(SECRETS_KEY_BYTES);
    return { box: new SecretBox(key, source), key };
  }

  seal(value: string, place: SecretPlace): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(additionalData(place));
    const sealed = Buffer.concat([nonce, cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}${this.id}:${sealed.toString('base64')}`;
  }

  /**
   * The clear value. A value in clear is refused: the daemon seals every value at start
   * (sealClearSecrets), so one found later was written by something else than slipway.
   */
  open(stored: string, place: SecretPlace): string {
    if (!isSealed(stored)) {
      throw new SecretUnreadable(
        `A secret in the store (${describePlace(place)}) is in clear, though every secret is sealed: it was not written by slipway.`,
        'Set the value again (`slipway env set`, or remove and add the webhook or drain); nothing read from it is used.',
      );
    }
    const keyId = sealedKeyId(stored)!;
    if (keyId.length !== this.id.length || !timingSafeEqual(Buffer.from(keyId), Buffer.from(this.id))) {
      throw new SecretUnreadable(
        `A secret in the store (${describePlace(place)}) was sealed with another key (key id ${keyId}), not the one in ${this.source} (key id ${this.id}).`,
        'Put back the secrets key file this store was written with (a platform backup holds it).',
      );
    }
    const sealed = Buffer.from(stored.slice(PREFIX.length + 17), 'base64');
    if (sealed.length < NONCE_BYTES + TAG_BYTES) throw unreadable(place);
    const decipher = createDecipheriv('aes-256-gcm', this.key, sealed.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(additionalData(place));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw unreadable(place);
    }
  }
}

function unreadable(place: SecretPlace): SecretUnreadable {
  return new SecretUnreadable(
    `A secret in the store (${describePlace(place)}) fails its check: it was altered or moved from another row.`,
    'Set the value again (`slipway env set`, or remove and add the webhook or drain); nothing read from it is used.',
  );
}
