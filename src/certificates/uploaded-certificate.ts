import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { ValidationError } from '../core/errors.js';
import { prepareCertificate } from '../router/haproxy/certificates.js';
import { haproxyRefusal } from '../router/haproxy/certificate-check.js';
import { certificateCovers, certificateNames, splitPemChain } from './certificate-names.js';
import { keyStrengthProblem, strictPemProblem, weakSignatureProblem } from './pem-rules.js';

export interface CheckedCertificate {
  certificatePem: string;
  privateKeyPem: string;
  notBefore: Date;
  notAfter: Date;
}

const PEM_HINT =
  'Each PEM line must start at the beginning of the line: -----BEGIN ...----- alone on its line, then base64 lines, then -----END ...----- (as openssl writes them).';
const HINT = 'Give the PEM certificate (leaf first, then its chain) with --cert and its PEM private key with --key.';

/**
 * Checks a certificate a user uploads for a domain before it is stored, by the rules of the
 * router that will serve it: strict PEM layout (HAProxy's OpenSSL loader refuses an indented
 * one), a key HAProxy and clients accept (RSA of 2048 bits or more, ECDSA P-256 and up), the key
 * is the certificate's, each certificate of the chain signed by the next, the certificate names
 * the domain and is valid now. Nothing of the
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
  const certificateLayout = strictPemProblem(certificatePem, 'certificate');
  if (certificateLayout) throw new ValidationError(certificateLayout, PEM_HINT);
  const keyLayout = strictPemProblem(privateKeyPem, 'private key');
  if (keyLayout) throw new ValidationError(keyLayout, PEM_HINT);
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
  const weak = keyStrengthProblem(key);
  if (weak)
    throw new ValidationError(weak, 'Issue the certificate for an RSA key of 2048 bits or more, or an ECDSA key on P-256, P-384 or P-521.');
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
  for (const [i, cert] of certs.entries()) {
    const selfSignedRoot = i > 0 && i === certs.length - 1 && cert.checkIssued(cert);
    const weak = selfSignedRoot ? undefined : weakSignatureProblem(cert, i + 1);
    if (weak) throw new ValidationError(weak, 'Have the certificate issued again with a SHA-256 (or stronger) signature.');
  }
  for (let i = 0; i + 1 < certs.length; i++) {
    const [child, parent] = [certs[i]!, certs[i + 1]!];
    if (!child.checkIssued(parent) || !child.verify(parent.publicKey)) {
      throw new ValidationError(
        `The chain is broken: certificate ${i + 1} of the file was not issued by certificate ${i + 2}.`,
        'Put the server certificate first, then each intermediate in order (the one that signed the previous one); the root may be left out.',
      );
    }
    if (new Date(parent.validTo) <= now) {
      throw new ValidationError(
        `Certificate ${i + 2} of the chain expired on ${new Date(parent.validTo).toISOString()}.`,
        'Use the current intermediate of the issuer.',
      );
    }
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
  const checked = {
    certificatePem: chain.join('\n') + '\n',
    privateKeyPem: key.export({ type: 'pkcs8', format: 'pem' }) as string,
    notBefore,
    notAfter,
  };
  // Last, the router's own reading of the files (the rules HAProxy's loader follows): what is
  // accepted here is what it will load.
  try {
    prepareCertificate({ names: [fqdn], certificatePem: checked.certificatePem, privateKeyPem: checked.privateKeyPem }, '/nonexistent');
  } catch (error) {
    throw new ValidationError(`The router would not load this certificate: ${(error as Error).message}`, HINT);
  }
  return checked;
}

/**
 * The last check of an upload, by the engine itself: HAProxy loads the certificate from a
 * throw-away configuration. Anything the rules above missed is refused here, at upload, rather
 * than by the router.
 */
export async function checkRouterLoads(fqdn: string, checked: CheckedCertificate): Promise<void> {
  const { pem } = prepareCertificate(
    { names: [fqdn], certificatePem: checked.certificatePem, privateKeyPem: checked.privateKeyPem },
    '/nonexistent',
  );
  const refusal = await haproxyRefusal(pem);
  if (refusal) throw new ValidationError(`The router refuses this certificate: ${refusal}.`, HINT);
}
