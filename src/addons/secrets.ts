import { randomBytes } from 'node:crypto';

/** A password made of hex digits: safe in URLs, config files and SQL literals alike. */
export function randomPassword(bytes = 24): string {
  return randomBytes(bytes).toString('hex');
}

/** A lower-case identifier slipway owns, e.g. `addon_3f9a1c0b7d2e` (valid in SQL unquoted). */
export function randomIdentifier(prefix: string, bytes = 8): string {
  if (!/^[a-z][a-z0-9_]*$/.test(prefix)) {
    throw new Error(`Identifier prefix "${prefix}" must be lower-case letters, digits and underscores.`);
  }
  return `${prefix}${randomBytes(bytes).toString('hex')}`;
}

/** Replaces every occurrence of the given secrets in a message (for errors and logs). */
export function redact(text: string, secrets: Array<string | undefined>): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join('***');
  }
  return out;
}
