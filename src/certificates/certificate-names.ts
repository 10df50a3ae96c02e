import type { X509Certificate } from 'node:crypto';

/** The DNS names a certificate covers (its subjectAltName), lower-case. */
export function certificateNames(cert: X509Certificate): string[] {
  return (cert.subjectAltName ?? '')
    .split(/,\s*/)
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4).toLowerCase());
}

/**
 * Whether a certificate serves a domain as the router would route it: an exact name needs that
 * name (or a wildcard one label above it); a wildcard domain needs the same wildcard.
 */
export function certificateCovers(cert: X509Certificate, fqdn: string): boolean {
  const names = certificateNames(cert);
  if (names.includes(fqdn)) return true;
  if (fqdn.startsWith('*.')) return false;
  const parent = fqdn.slice(fqdn.indexOf('.') + 1);
  return names.includes(`*.${parent}`);
}

/** Splits a PEM bundle into its certificates, leaf first. */
export function splitPemChain(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}
