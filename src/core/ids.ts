import { randomBytes, randomUUID, createHash } from 'node:crypto';

export type IdPrefix = 'app' | 'org' | 'user' | 'token' | 'key' | 'deployment' | 'addon' | 'instance';

/** Ids are `<prefix>_<uuid>`: readable in logs, unique without coordination. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomUUID()}`;
}

/** A new API token: only its hash is stored. */
export function newSecretToken(): string {
  return `slw_${randomBytes(24).toString('base64url')}`;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
