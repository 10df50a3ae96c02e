/**
 * Every value that ends up in an engine's configuration (nginx's file, HAProxy's maps and
 * runtime commands) passes through here first.
 * The rules are deliberately narrow (DNS names, dotted-quad IPv4, numeric ports) so
 * that no quote, semicolon, brace, dollar sign, whitespace or wildcard can ever reach
 * the rendered file: config injection is impossible by construction, not by escaping.
 */
import type { HostRoute, RoutingTable, Upstream } from './router.js';

// Underscores are allowed inside a label: application hosts are `<app_id>.<domain>` and app ids
// are `app_<uuid>`. Underscore is as inert in nginx's configuration as a letter.
const LABEL = /^[a-z0-9](?:[a-z0-9_-]{0,61}[a-z0-9])?$/;

/** Returns the host lower-cased, or throws saying why it cannot be routed. `*.` may lead when wildcards are allowed. */
export function validateHostName(host: unknown, options: { wildcard?: boolean } = {}): string {
  if (typeof host !== 'string') {
    throw new Error(`Router host must be a string, got ${typeof host}. Pass a domain name such as "my-app.example.com".`);
  }
  const lowered = host.toLowerCase();
  const shown = JSON.stringify(host.length > 80 ? `${host.slice(0, 80)}...` : host);
  if (lowered.length === 0 || lowered.length > 253) {
    throw new Error(
      `Router host ${shown} has ${host.length} characters; a domain name has 1 to 253. Use a name such as "my-app.example.com".`,
    );
  }
  const labels = lowered.split('.');
  if (options.wildcard && labels[0] === '*' && labels.length > 2) labels.shift();
  for (const label of labels) {
    if (!LABEL.test(label)) {
      throw new Error(
        `Router host ${shown} is not a plain domain name: each dot-separated part must be 1-63 characters of a-z, 0-9, "-" and "_", ` +
          `not starting or ending with "-" (no ports, wildcards, spaces or punctuation). Use a name such as "my-app.example.com".`,
      );
    }
  }
  return lowered;
}

/** Accepts only canonical dotted-quad IPv4 ("10.0.0.2"), no leading zeros, no hostnames. */
export function validateIPv4(address: unknown, what = 'Upstream address'): string {
  const shown = JSON.stringify(address);
  if (typeof address !== 'string' || !/^\d{1,3}(\.\d{1,3}){3}$/.test(address)) {
    throw new Error(`${what} ${shown} is not an IPv4 address. Give the instance's address as four dotted numbers, e.g. "10.200.0.2".`);
  }
  for (const part of address.split('.')) {
    if (Number(part) > 255 || (part.length > 1 && part.startsWith('0'))) {
      throw new Error(
        `${what} ${shown} is not a valid IPv4 address: "${part}" is out of range or zero-padded. Each part must be 0-255 without leading zeros.`,
      );
    }
  }
  return address;
}

export function validatePort(port: unknown, what = 'Port'): number {
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`${what} ${JSON.stringify(port)} is not a TCP port. Give an integer from 1 to 65535.`);
  }
  return port;
}

// App ids end up in engine configuration (backend names) too: the same narrow rule.
const APP_ID = /^[A-Za-z0-9_-]{1,100}$/;

export function validateAppId(appId: unknown): string {
  if (typeof appId !== 'string' || !APP_ID.test(appId)) {
    throw new Error(`Routing table app id ${JSON.stringify(appId)} must be 1-100 letters, digits, "_" or "-".`);
  }
  return appId;
}

export interface ValidatedRoute {
  /** Lower-cased; `*.example.com` for a wildcard. */
  host: string;
  appId: string;
  upstreams: Upstream[];
  forceHttps: boolean;
}

/**
 * Checks a whole table and returns it in a stable order (sorted by host) so the same
 * table always renders the same file. Hosts differing only in case are one host.
 */
export function validateTable(table: RoutingTable): ValidatedRoute[] {
  if (!(table instanceof Map)) {
    throw new Error('Routing table must be a Map from host name to a route ({ appId, upstreams, forceHttps }).');
  }
  const byHost = new Map<string, ValidatedRoute>();
  for (const [rawHost, rawRoute] of table as Map<unknown, HostRoute>) {
    const host = validateHostName(rawHost, { wildcard: true });
    if (byHost.has(host)) {
      throw new Error(`Routing table names host "${host}" twice (host names are case-insensitive). Keep one entry per host.`);
    }
    if (typeof rawRoute !== 'object' || rawRoute === null) {
      throw new Error(`Routing table entry for "${host}" must be a route ({ appId, upstreams, forceHttps }).`);
    }
    const appId = validateAppId(rawRoute.appId);
    if (typeof rawRoute.forceHttps !== 'boolean') {
      throw new Error(`Routing table entry for "${host}": forceHttps must be true or false.`);
    }
    const rawUpstreams: unknown = rawRoute.upstreams;
    if (!Array.isArray(rawUpstreams)) {
      throw new Error(`Routing table entry for "${host}" must be a list of upstreams (an empty list means "no running instance").`);
    }
    const seen = new Set<string>();
    const upstreams: Upstream[] = [];
    for (const upstream of rawUpstreams as readonly Upstream[]) {
      const address = validateIPv4(upstream?.address, `Upstream address for "${host}"`);
      const port = validatePort(upstream?.port, `Upstream port for "${host}"`);
      const key = `${address}:${port}`;
      // nginx accepts duplicate servers, but they would silently double one instance's share.
      if (seen.has(key)) continue;
      seen.add(key);
      upstreams.push({ address, port });
    }
    byHost.set(host, { host, appId, upstreams, forceHttps: rawRoute.forceHttps });
  }
  return [...byHost.values()].sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
}

/** An IPv4 CIDR ("10.0.0.0/8") or a single address (taken as /32), canonical. */
export function validateCidr(value: unknown, what = 'Trusted proxy'): string {
  const text = typeof value === 'string' ? value : '';
  const [address, bits, extra] = text.split('/');
  const prefix = bits === undefined ? 32 : /^\d{1,2}$/.test(bits) ? Number(bits) : NaN;
  if (extra !== undefined || !(prefix >= 0 && prefix <= 32)) {
    throw new Error(
      `${what} ${JSON.stringify(value)} is not an IPv4 CIDR. Give an address with a prefix length, e.g. "10.0.0.0/8" or "192.0.2.7/32".`,
    );
  }
  return `${validateIPv4(address, what)}/${prefix}`;
}
