import { ValidationError } from '../core/errors.js';
import type { EgressGuard } from '../network/egress-guard.js';
import { DRAIN_TYPES, type DrainType } from './drain-types.js';

const SCHEMES: Record<DrainType, string[]> = {
  TCPSyslog: ['tcp:'],
  UDPSyslog: ['udp:'],
  HTTP: ['http:', 'https:'],
  ElasticSearch: ['http:', 'https:'],
};
const DEFAULT_PORT: Record<string, number> = { 'http:': 80, 'https:': 443, 'tcp:': 514, 'udp:': 514 };

export function parseDrainType(input: unknown): DrainType {
  const found = DRAIN_TYPES.find((t) => typeof input === 'string' && t.toLowerCase() === input.toLowerCase());
  if (!found)
    throw new ValidationError(
      `A drain's type is one of ${DRAIN_TYPES.join(', ')}.`,
      'For example: `slipway drain create HTTP https://logs.example.com/in`.',
    );
  return found;
}

/** The port a drain's URL reaches, its scheme's default when it names none. */
export function drainPort(url: URL): number {
  return url.port ? Number(url.port) : DEFAULT_PORT[url.protocol]!;
}

/** The URL's host without IPv6 brackets. */
export function drainHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/**
 * Checks a drain's URL for its type and refuses, with the reason, any scheme but
 * http(s)/tcp/udp, credentials in the URL, and what the egress guard refuses (slipway's own
 * ports, the sandboxes, private, link-local and other non-public addresses unless the operator
 * allowed them: docs/security.md). Names are resolved and every address is checked; the
 * senders check again at each connection.
 */
export async function checkDrainUrl(type: DrainType, input: unknown, guard: EgressGuard): Promise<URL> {
  let url: URL;
  try {
    url = new URL(String(input ?? ''));
  } catch {
    throw new ValidationError(
      'The drain URL is not a URL.',
      'Give a full URL such as https://logs.example.com/in or tcp://syslog.example.com:514.',
    );
  }
  if (!SCHEMES[type].includes(url.protocol))
    throw new ValidationError(
      `A ${type} drain's URL starts with ${SCHEMES[type].map((s) => `${s}//`).join(' or ')}, not ${url.protocol}//.`,
      'Drains send to http(s), tcp (TCPSyslog) or udp (UDPSyslog) receivers only.',
    );
  if (url.username || url.password)
    throw new ValidationError(
      'The drain URL carries credentials.',
      'Give them with --username and --password, which are not shown in listings.',
    );
  if (!url.hostname) throw new ValidationError('The drain URL names no host.', 'Give the receiver as host:port.');
  const host = drainHost(url);
  const refusal = await guard.refusalOfHost(host, drainPort(url));
  if (refusal?.endsWith('does not resolve')) {
    throw new ValidationError(`The drain's host ${host} does not resolve.`, 'Check the name, or give an address.');
  }
  if (refusal)
    throw new ValidationError(
      `The drain may not point at ${host}: ${refusal}.`,
      'Send drains to a log receiver on the internet, outside the platform.',
    );
  return url;
}
