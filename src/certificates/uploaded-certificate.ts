import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { ValidationError } from '../core/errors.js';
import { certificateCovers, certificateNames, splitPemChain } from './certificate-names.js';

export interface CheckedCertificate {
  certificatePem: string;
  privateKeyPem: string;
  notBefore: Date;
  notAfter: Date;
}

const HINT = 'Give the PEM certificate (leaf first, then its chain) with --cert and its PEM private key with --key.';

/**
 * Checks a certificate a user uploads for a domain before it is stored: both parse as PEM, the
 * key is the certificate's, the certificate names the domain and is valid now. Nothing of the
 * files is quoted back: a key must never end up in an error message or a log.
 */
export function checkUploadedCertificate(
  fqdn: string,
  certificatePem: unknown,
  privateKeyPem: unknown,
  now = new Date(),
): CheckedCertificate {
  if (typeof certificatePem !== 'string' || typeof privateKeyPem !== 'string') {
    throw new ValidationError('Both a certificate and a private key are required.', HINT);
  }
  const chain = splitPemChain(certificatePem);
  if (chain.length === 0) throw new ValidationError('The certificate is not a PEM certificate (no BEGIN CERTIFICATE block).', HINT);
  let certs: X509Certificate[];
  try {
    certs = chain.map((pem) => new X509Certificate(pem));
  } catch {
    throw new ValidationError('The certificate file holds a PEM block that is not a valid X.509 certificate.', HINT);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(privateKeyPem);
  } catch {
    throw new ValidationError(
      'The private key is not a PEM private key (unencrypted PKCS#8, PKCS#1 or SEC1).',
      `${HINT} An encrypted key must be decrypted first.`,
    );
  }
  const leaf = certs[0]!;
  if (!leaf.checkPrivateKey(key)) {
    throw new ValidationError(
      'The private key does not belong to the certificate.',
      'Give the key the certificate was issued for (the first certificate of the file is the server certificate).',
    );
  }
  if (!certificateCovers(leaf, fqdn)) {
    const names = certificateNames(leaf);
    throw new ValidationError(
      `The certificate does not cover ${fqdn}: it is for ${names.length ? names.join(', ') : 'no DNS name (no subjectAltName)'}.`,
      `Upload a certificate whose subjectAltName includes ${fqdn}.`,
    );
  }
  const notBefore = new Date(leaf.validFrom);
  const notAfter = new Date(leaf.validTo);
  if (notAfter <= now)
    throw new ValidationError(`The certificate expired on ${notAfter.toISOString()}.`, 'Renew it and upload the new one.');
  if (notBefore > now)
    throw new ValidationError(
      `The certificate is valid only from ${notBefore.toISOString()}.`,
      'Check the clock of the machine that issued it.',
    );
  return {
    certificatePem: chain.join('\n') + '\n',
    privateKeyPem: key.export({ type: 'pkcs8', format: 'pem' }) as string,
    notBefore,
    notAfter,
  };
}
