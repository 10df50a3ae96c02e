/**
 * Certificates as HAProxy keeps them: one PEM file per certificate (chain then key) under
 * certs/, named after its names so a renewal replaces the same entry in place, and one line
 * per file in the crt-list with its names as SNI filters. The first line of the crt-list is
 * the default certificate, served to clients asking for a name nobody has.
 */
import { createHash, X509Certificate, createPrivateKey } from 'node:crypto';
import { join } from 'node:path';
import type { TlsCertificate } from '../router.js';
import { validateHostName } from '../validate.js';

export interface PreparedCertificate {
  /** Absolute file name HAProxy knows the certificate by. */
  file: string;
  names: string[];
  /** Certificate chain then private key, without blank lines. */
  pem: string;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n[A-Za-z0-9+/=\r\n]+?-----END \1-----/g;

/** Keeps only the PEM blocks (no blank lines, no text around them), which is what the runtime API payload allows. */
function pemBlocks(text: string, what: string): string[] {
  const blocks = [...text.matchAll(PEM_BLOCK)].map((m) => m[0].replace(/\r/g, '').trim());
  if (blocks.length === 0) throw new Error(`The ${what} is not PEM text (no -----BEGIN ...----- block).`);
  return blocks;
}

export function prepareCertificate(cert: TlsCertificate, certDir: string): PreparedCertificate {
  if (!Array.isArray(cert.names) || cert.names.length === 0) throw new Error('A certificate needs at least one name to be served for.');
  const names = [...new Set(cert.names.map((name) => validateHostName(name, { wildcard: true })))].sort();
  const shownNames = names.join(', ');
  const chain = pemBlocks(String(cert.certificatePem), `certificate for ${shownNames}`);
  const keys = pemBlocks(String(cert.privateKeyPem), `private key for ${shownNames}`);
  if (!chain.every((block) => block.startsWith('-----BEGIN CERTIFICATE-----')))
    throw new Error(`The certificate for ${shownNames} holds something other than certificates.`);
  if (keys.length !== 1 || !/^-----BEGIN (RSA |EC )?PRIVATE KEY-----/.test(keys[0]!))
    throw new Error(`The private key for ${shownNames} must be one unencrypted PEM private key.`);
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(chain[0]!);
    if (!leaf.checkPrivateKey(createPrivateKey(keys[0]!))) throw new Error('mismatch');
  } catch (error) {
    throw new Error(
      (error as Error).message === 'mismatch'
        ? `The private key for ${shownNames} does not belong to its certificate.`
        : `The certificate or key for ${shownNames} cannot be read: ${(error as Error).message}.`,
    );
  }
  return { file: fileFor(names, certDir), names, pem: [...chain, keys[0]!].join('\n') + '\n' };
}

function fileFor(sortedNames: readonly string[], certDir: string): string {
  const id = createHash('sha256').update(sortedNames.join(' ')).digest('hex').slice(0, 24);
  return join(certDir, `${id}.pem`);
}

/** The file a certificate's names are served from, when its names are valid: what a refused one leaves in place. */
export function certificateFileOf(cert: TlsCertificate, certDir: string): string | undefined {
  try {
    return fileFor([...new Set(cert.names.map((name) => validateHostName(name, { wildcard: true })))].sort(), certDir);
  } catch {
    return undefined;
  }
}

/** HAProxy (or its file rules) refused one certificate: the others of the change go on. */
export class CertificateRefused extends Error {}

export interface CertificateRefusal {
  /** The file its names are served from, if they are valid names. */
  file: string | undefined;
  names: readonly string[];
  reason: string;
}

/**
 * Some certificates of a change were refused, the others applied: `refusedNames` says which
 * names keep what they had (callers that know nothing of it see a plain error).
 */
export class CertificatesPartlyApplied extends Error {
  constructor(
    message: string,
    readonly refusedNames: string[],
  ) {
    super(message);
  }
}

/** The crt-list line of a certificate: its file, then its names as SNI filters. */
export function crtListLine(cert: PreparedCertificate): string {
  return [cert.file, ...cert.names].join(' ');
}
