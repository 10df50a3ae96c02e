import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { networkInterfaces } from 'node:os';
import { ValidationError } from '../core/errors.js';
import { DRAIN_TYPES, type DrainType } from './drain-types.js';

/** Addresses a drain may not point at: slipway's own, so a drain cannot talk to the platform itself. */
export interface ForbiddenTargets {
  /** Ports slipway listens on (API, SSH, router, HTTPS, metrics, the daemon's loopback helpers). */
  ports: number[];
  /** Addresses those ports listen on besides loopback and this machine's own (`--listen`). */
  listen: string;
  /** IPv4 networks of the sandboxes, `a.b.c.d/n`. */
  subnets: string[];
}

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

function ipv4ToNumber(address: string): number {
  return address.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

export function inSubnet(address: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  if (isIP(address) !== 4 || !base || isIP(base) !== 4) return false;
  const size = 2 ** (32 - Number(bits));
  const start = Math.floor(ipv4ToNumber(base) / size) * size;
  const n = ipv4ToNumber(address);
  return n >= start && n < start + size;
}

function isLoopback(address: string): boolean {
  return address === '::1' || inSubnet(address, '127.0.0.0/8') || address === '0.0.0.0' || address === '::';
}

function ownAddresses(): Set<string> {
  const own = new Set<string>();
  for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) own.add(i.address);
  return own;
}

/**
 * Checks a drain's URL for its type and refuses, with the reason, any scheme but
 * http(s)/tcp/udp, credentials in the URL, and addresses that are slipway's own: its ports on
 * this machine and the sandboxes' networks (a drain there would feed an app's logs to another
 * app or to the platform's own API). Names are resolved and every address is checked.
 */
export async function checkDrainUrl(type: DrainType, input: unknown, forbidden: ForbiddenTargets): Promise<URL> {
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
  const port = url.port ? Number(url.port) : DEFAULT_PORT[url.protocol]!;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  } catch {
    throw new ValidationError(`The drain's host ${host} does not resolve.`, 'Check the name, or give an address.');
  }
  for (const address of addresses) {
    const reason = forbiddenReason(address, port, forbidden);
    if (reason) throw new ValidationError(reason, 'Send drains to a log receiver outside the platform.');
  }
  return url;
}

/** Why a drain may not send to this address and port, or undefined when it may. */
export function forbiddenReason(address: string, port: number, forbidden: ForbiddenTargets): string | undefined {
  const plain = address.replace(/^::ffff:/, '');
  const subnet = forbidden.subnets.find((s) => inSubnet(plain, s));
  if (subnet) return `The drain points at ${plain}, in the sandboxes' network ${subnet}: apps may not receive other apps' logs that way.`;
  const local = isLoopback(plain) || ownAddresses().has(plain) || plain === forbidden.listen;
  if (local && forbidden.ports.includes(port)) return `The drain points at port ${port} of this machine, where slipway itself listens.`;
  return undefined;
}

/**
 * A `lookup` for the drain's sockets that refuses the addresses `checkDrainUrl` refuses: a
 * name checked when the drain was created may resolve elsewhere later (DNS rebinding).
 */
export function guardedLookup(forbidden: ForbiddenTargets, port: number): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      for (const a of addresses) {
        const reason = forbiddenReason(a.address, port, forbidden);
        if (reason) return callback(Object.assign(new Error(reason), { code: 'EACCES' }), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      callback(null, first.address, first.family);
    });
  };
}
