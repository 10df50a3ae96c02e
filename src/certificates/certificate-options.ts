/** Daemon options of the certificate room, read from `slipway server` flags. */
export interface CertificateOptions {
  /** ACME directory URL; absent: the internal CA signs every name. */
  acmeDirectory?: string;
  acmeEmail?: string;
  /** PEM file of the CA that signed the ACME directory's own TLS certificate (a private ACME server). */
  acmeDirectoryCaFile?: string;
  /** How often certificates are checked for renewal, in milliseconds. */
  checkIntervalMs?: number;
}

export function parseAcmeDirectory(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`--acme-directory must be the URL of an ACME directory (https://.../directory), not ${JSON.stringify(value)}.`);
  }
  if (url.protocol !== 'https:')
    throw new Error(`--acme-directory must be an https:// URL (ACME runs over TLS), not ${JSON.stringify(value)}.`);
  return url.href;
}

export function parseAcmeEmail(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[^\s@<>()",;:]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$/.test(value))
    throw new Error(`--acme-email must be an e-mail address, not ${JSON.stringify(value)}.`);
  return value;
}

export function parseCheckInterval(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 7 * 86_400) {
    throw new Error(`--certificate-check-interval is a number of seconds from 1 to 604800, not ${JSON.stringify(value)}.`);
  }
  return seconds * 1000;
}
