import type { KeyObject, X509Certificate } from 'node:crypto';
import * as x509 from '@peculiar/x509';

// A PEM block the way OpenSSL's PEM reader (HAProxy's loader) takes it: the armour lines alone
// at the start of their line, base64 lines between them, nothing indented.
const STRICT_BLOCK = /^-----BEGIN ([A-Z0-9 ]+)-----\r?\n(?:[A-Za-z0-9+/=]+\r?\n)+-----END \1-----\r?$/gm;
const ANY_BEGIN = /-----BEGIN [A-Z0-9 ]+-----/g;

/** Why the text is not strict PEM (an indented block, text inside a block), or undefined. */
export function strictPemProblem(text: string, what: string): string | undefined {
  const begins = text.match(ANY_BEGIN)?.length ?? 0;
  const strict = text.match(STRICT_BLOCK)?.length ?? 0;
  if (begins === strict) return undefined;
  return `The ${what} file is not PEM as the router reads it: ${begins - strict} of its ${begins} block(s) is indented or has something other than base64 lines between its BEGIN and END lines.`;
}

const ACCEPTED_CURVES = new Set(['prime256v1', 'secp384r1', 'secp521r1']);

/** Why clients or the router would refuse the key (type or size), or undefined. */
export function keyStrengthProblem(key: KeyObject): string | undefined {
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'rsa') {
    const bits = details.modulusLength ?? 0;
    return bits >= 2048 ? undefined : `The key is RSA of ${bits} bits: the router and browsers refuse RSA keys under 2048 bits.`;
  }
  if (key.asymmetricKeyType === 'ec') {
    const curve = details.namedCurve ?? 'unknown';
    return ACCEPTED_CURVES.has(curve) ? undefined : `The key is ECDSA on curve ${curve}: only P-256, P-384 and P-521 are accepted.`;
  }
  return `The key is of type ${key.asymmetricKeyType ?? 'unknown'}: only RSA (2048 bits or more) and ECDSA (P-256 and up) are served.`;
}

const WEAK_HASHES = new Set(['SHA-1', 'MD5', 'MD2', 'MD4']);

/**
 * Why a certificate's signature would be refused (SHA-1 or MD5: OpenSSL's default security level
 * in the router, and every browser), or undefined. A root's own signature is not checked by
 * anyone: the caller skips a self-signed certificate at the end of a chain.
 */
export function weakSignatureProblem(cert: X509Certificate, position: number): string | undefined {
  let hash: string | undefined;
  try {
    const algorithm = new x509.X509Certificate(cert.raw).signatureAlgorithm as { hash?: { name?: string } };
    hash = algorithm.hash?.name;
  } catch {
    return undefined;
  }
  if (!hash || !WEAK_HASHES.has(hash.toUpperCase())) return undefined;
  return `Certificate ${position} of the file is signed with ${hash}, which the router and browsers refuse.`;
}
