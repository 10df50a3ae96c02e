import { createHash } from 'node:crypto';

/**
 * `SHA256:<base64 without padding>` of the key's wire-format blob: the same text
 * `ssh-keygen -lf key.pub` prints, so users and the store can match keys by it.
 */
export function publicKeyFingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** The algorithm name written inside a public key blob (e.g. `ssh-ed25519`, `ssh-rsa`). */
export function publicKeyAlgorithm(blob: Buffer): string | null {
  if (blob.length < 4) return null;
  const length = blob.readUInt32BE(0);
  if (length === 0 || length > 64 || blob.length < 4 + length) return null;
  return blob.subarray(4, 4 + length).toString('latin1');
}
