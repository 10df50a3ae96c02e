import { isIP } from 'node:net';
import { lookup } from 'node:dns/promises';
import { networkInterfaces } from 'node:os';

/**
 * Where a notification may not be sent (docs/behaviour.md, Notifications): the sandboxes'
 * subnet (apps and add-on servers live there: a webhook must not become a way to reach them
 * from the daemon), link-local addresses (cloud metadata services), and slipway's own ports on
 * this machine (its API, git server, router, metrics). Anything else, loopback included, is the
 * operator's or the user's own receiver.
 */
export interface AddressGuard {
  /** The sandboxes' IPv4 networks (`10.<n>.0.0/16`; the swarm's too with that backend). */
  subnets: readonly string[];
  /** The ports slipway itself listens on, with what listens there. */
  ownPorts: ReadonlyArray<{ port: number; what: string }>;
}

function ipv4ToNumber(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

function inIpv4Network(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/') as [string, string];
  const size = 2 ** (32 - Number(bits));
  const start = Math.floor(ipv4ToNumber(base) / size) * size;
  const n = ipv4ToNumber(ip);
  return n >= start && n < start + size;
}

/** `::ffff:10.77.0.5` is 10.77.0.5. */
function unmapped(ip: string): string {
  const match = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return match ? match[1]! : ip;
}

function isThisMachine(ip: string): boolean {
  if (isIP(ip) === 4 && (inIpv4Network(ip, '127.0.0.0/8') || ip === '0.0.0.0')) return true;
  if (ip === '::1' || ip === '::') return true;
  return Object.values(networkInterfaces())
    .flat()
    .some((address) => address?.address === ip);
}

/** Why `ip:port` may not receive notifications, or undefined when it may. */
export function refusalOf(ip: string, port: number, guard: AddressGuard): string | undefined {
  const address = unmapped(ip);
  const subnet = isIP(address) === 4 ? guard.subnets.find((cidr) => inIpv4Network(address, cidr)) : undefined;
  if (subnet) return `${address} is in the sandboxes' subnet ${subnet}, where the apps and add-on servers run`;
  if ((isIP(address) === 4 && inIpv4Network(address, '169.254.0.0/16')) || /^fe[89ab]/i.test(address)) {
    return `${address} is a link-local address (cloud metadata services answer there)`;
  }
  const own = guard.ownPorts.find((p) => p.port === port);
  if (own && isThisMachine(address)) return `${address}:${port} is slipway's own ${own.what}`;
  return undefined;
}

/** The port a URL reaches, its default one when it names none. */
export function portOf(url: URL): number {
  if (url.port) return Number(url.port);
  return { 'http:': 80, 'https:': 443, 'smtp:': 587, 'smtps:': 465 }[url.protocol] ?? 0;
}

/** The URL's host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Every address the URL's host resolves to, checked; the first refusal is returned. A name that
 * does not resolve is refused too: nothing could be delivered to it.
 */
export async function refusalOfUrl(url: URL, guard: AddressGuard): Promise<string | undefined> {
  const host = hostOf(url);
  const port = portOf(url);
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true })).map((a) => a.address);
    } catch {
      return `the host name ${host} does not resolve`;
    }
  }
  for (const address of addresses) {
    const refusal = refusalOf(address, port, guard);
    if (refusal) return host === address ? refusal : `${host} resolves to ${address}: ${refusal}`;
  }
  return undefined;
}
