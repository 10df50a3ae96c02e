/** Daemon options of the certificate room, read from `slipway server` flags. */
export interface CertificateOptions {
  /** ACME directory URL; absent: the internal CA signs every name. */
  acmeDirectory?: string;
  acmeEmail?: string;
  /** PEM file of the CA that signed the ACME directory's own TLS certificate (a private ACME server). */
  acmeDirectoryCaFile?: string;
  /** How often certificates are checked for renewal, in milliseconds. */
  checkIntervalMs?: number;
  /** The wait after a name's first failed ACME order (doubled at each next failure, at most a day); default 15 minutes. */
  acmeRetryBaseMs?: number;
  /** New domains wait, unrouted and without certificates, for their DNS TXT proof. */
  requireDomainVerification?: boolean;
  /** `address:port` of the DNS server proofs are looked up at; absent: the system's resolvers. */
  dnsResolver?: string;
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

/** `--acme-retry-base <seconds>`: the wait after a name's first failed order, doubled at each next failure. */
export function parseAcmeRetryBase(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 86_400) {
    throw new Error(`--acme-retry-base is a number of seconds from 1 to 86400, not ${JSON.stringify(value)}.`);
  }
  return seconds * 1000;
}

/** `--dns-resolver <address[:port]>`: the DNS server domain proofs are looked up at (IPv4, default port 53). */
export function parseDnsResolver(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d{1,3}(?:\.\d{1,3}){3})(?::(\d{1,5}))?$/.exec(value);
  const port = match?.[2] === undefined ? 53 : Number(match[2]);
  if (!match || match[1]!.split('.').some((part) => Number(part) > 255) || port < 1 || port > 65535) {
    throw new Error(`--dns-resolver is an IPv4 address with an optional port, such as 127.0.0.1:8053, not ${JSON.stringify(value)}.`);
  }
  return `${match[1]}:${port}`;
}
