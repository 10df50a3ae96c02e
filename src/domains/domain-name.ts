import { domainToASCII } from 'node:url';
import { getPublicSuffix } from 'tldts';
import { ValidationError } from '../core/errors.js';

/** A custom domain as the platform stores it: lower-case ASCII (international names in punycode). */
export interface DomainName {
  /** `shop.example.com`, or `*.example.com` for a wildcard. */
  fqdn: string;
  wildcard: boolean;
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
// ASCII that may appear in a host name as typed (non-ASCII letters are international names).
const ASCII_ALLOWED = /^[A-Za-z0-9.*-]$/;

const EXAMPLES = 'For example: shop.example.com, *.example.com or bücher.example';

function shown(input: string): string {
  return JSON.stringify(input.length > 80 ? `${input.slice(0, 80)}...` : input);
}

/**
 * Reads a domain a user asks for: an exact host name or a wildcard `*.<name>` that covers every
 * sub-domain. International names become punycode; anything else that is not a host name
 * (URLs, ports, paths, IP addresses, percent-escapes, underscores) is refused. Names under the
 * platform's own domain are the platform's: `<app_id>.<domain>` already routes to each app.
 */
export function parseDomainName(input: unknown, platformDomain: string): DomainName {
  if (typeof input !== 'string' || input.length === 0) {
    throw new ValidationError('A domain name is required.', EXAMPLES);
  }
  if (input.length > 253 * 4)
    throw new ValidationError(`${shown(input)} is too long for a domain name (at most 253 characters).`, EXAMPLES);
  for (const char of input) {
    if (char.charCodeAt(0) < 0x80 && !ASCII_ALLOWED.test(char)) {
      throw new ValidationError(
        `${shown(input)} is not a host name: ${JSON.stringify(char)} cannot appear in one.`,
        `Give the name alone, without scheme, port or path. ${EXAMPLES}.`,
      );
    }
  }
  const wildcard = input.startsWith('*.');
  const rest = (wildcard ? input.slice(2) : input).replace(/\.$/, '');
  if (rest.includes('*')) {
    throw new ValidationError(
      `${shown(input)} is not a host name: a wildcard is only allowed as the whole first label, as in *.example.com.`,
      EXAMPLES,
    );
  }
  const ascii = domainToASCII(rest);
  if (ascii === '') throw new ValidationError(`${shown(input)} is not a valid international domain name.`, EXAMPLES);
  if (ascii.length > (wildcard ? 251 : 253)) {
    throw new ValidationError(`${shown(input)} is too long for a domain name (at most 253 characters in its ASCII form).`, EXAMPLES);
  }
  const labels = ascii.split('.');
  for (const label of labels) {
    if (!LABEL.test(label)) {
      throw new ValidationError(
        `${shown(input)} is not a host name: each dot-separated part must be 1 to 63 letters, digits or "-", not starting or ending with "-".`,
        EXAMPLES,
      );
    }
  }
  if (labels.length < 2) {
    throw new ValidationError(`${shown(input)} is a single label; a domain needs at least a name and a top-level domain.`, EXAMPLES);
  }
  if (/^[0-9]+$/.test(labels.at(-1)!)) {
    throw new ValidationError(`${shown(input)} looks like an IP address; applications are reached by name.`, EXAMPLES);
  }
  const base = platformDomain.toLowerCase();
  if (ascii === base || ascii.endsWith(`.${base}`)) {
    throw new ValidationError(
      `${shown(input)} is under the platform's own domain ${base}, whose names belong to the platform.`,
      `Each application is already reachable at <app_id>.${base}; add a domain of your own.`,
    );
  }
  if (wildcard) refuseWideWildcard(input, ascii, base);
  return { fqdn: wildcard ? `*.${ascii}` : ascii, wildcard };
}

/**
 * A wildcard takes every name under its base: over a public suffix (`*.co.uk`, `*.github.io`,
 * from the Public Suffix List, private entries included) it would take other people's domains,
 * and over a parent of the platform's domain every name the platform has not given out yet.
 */
function refuseWideWildcard(input: string, base: string, platformDomain: string): void {
  if (getPublicSuffix(base, { allowPrivateDomains: true }) === base) {
    throw new ValidationError(
      `${shown(input)} is a wildcard over ${base}, a public suffix: its names belong to many different owners.`,
      `Add a wildcard over a domain of your own, such as *.example.${base}.`,
    );
  }
  if (platformDomain.endsWith(`.${base}`)) {
    throw new ValidationError(
      `${shown(input)} would cover the platform's own domain ${platformDomain}.`,
      'Add the names you need one by one, or a wildcard below them that does not contain the platform domain.',
    );
  }
}

/** The name as people read it (`bücher.example` for `xn--bcher-kva.example`), for display only. */
export { domainToUnicode as readableDomain } from 'node:url';
