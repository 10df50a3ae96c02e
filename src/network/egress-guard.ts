/**
 * The one check every connection the daemon itself opens goes through: webhooks, drains of
 * every kind, SMTP, the S3 backup store, ACME (the directory and each redirect) and the DNS
 * resolver it is told to use. The daemon runs as root on the operator's network: a tenant's
 * webhook or drain must not turn it into a client of the metadata service, the operator's
 * other machines, this machine's own services or the sandboxes.
 *
 * The check is made on the address each connection uses: a name is resolved here, every
 * address it gives is checked, and the connection goes to a checked address (a `lookup` for
 * net, tls, http and dgram; agents that apply it to every connection, redirects included). So a
 * name that resolved to a public address when a webhook was added and to a private one later
 * (DNS rebinding) is refused when it would connect.
 *
 * Refused whatever the operator allows: the sandboxes' subnets and slipway's own ports on this
 * machine. Refused unless `--egress-allow` opens them: REFUSED_RANGES (egress-ranges.ts) and
 * this machine's own addresses.
 */
import { lookup as systemLookup, Resolver } from 'node:dns';
import { Agent as HttpAgent, type AgentOptions } from 'node:http';
import { Agent as HttpsAgent, type AgentOptions as HttpsAgentOptions } from 'node:https';
import { isIP, type LookupFunction, type Socket, type TcpNetConnectOpts } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { Duplex } from 'node:stream';
import { type Cidr, describeKind, effectiveAddress, inAnyCidr, parseCidr, refusedRangeOf, singleAddressCidr } from './egress-ranges.js';

export interface EgressPolicy {
  /** The operator's `--egress-allow` ranges (IPv4 or IPv6). */
  allow: readonly string[];
  /** The sandboxes' networks (`10.<n>.0.0/16`, the swarm's too): never reached, allowed or not. */
  sandboxSubnets: readonly string[];
  /** Ports slipway listens on, with what listens there: never reached on this machine. */
  ownPorts: ReadonlyArray<{ port: number; what: string }>;
  /** The address slipway's ports listen on besides loopback and the machine's own (`--listen`). */
  listen?: string;
  /** `ip:port` of the DNS server names are resolved at (`--dns-resolver`); absent: the system's. */
  resolver?: string;
}

/** A connection the guard refused; `code` lets callers tell it from a network failure. */
export class EgressRefusedError extends Error {
  readonly code = 'EGRESS_REFUSED';
}

type ResolvedAddress = { address: string; family: number };

export class EgressGuard {
  private readonly allow: Cidr[];
  private readonly sandboxSubnets: Cidr[];
  private readonly ownPorts: Array<{ port: number; what: string }>;
  private readonly resolver: Resolver | undefined;

  constructor(private readonly policy: EgressPolicy) {
    this.allow = policy.allow.map(parseCidr);
    this.sandboxSubnets = policy.sandboxSubnets.map(parseCidr);
    this.ownPorts = [...policy.ownPorts];
    if (policy.resolver) {
      this.resolver = new Resolver({ timeout: 2000, tries: 2 });
      this.resolver.setServers([policy.resolver]);
    }
  }

  /** A port slipway listens on that became known after the guard was made (the API's, the git server's). */
  addOwnPort(port: number, what: string): void {
    if (port > 0) this.ownPorts.push({ port, what });
  }

  /** Why `address:port` may not be reached, or undefined when it may. */
  refusal(address: string, port: number): string | undefined {
    const plain = effectiveAddress(address);
    if (!isIP(plain)) return `${address} is not an IP address`;
    if (inAnyCidr(plain, this.sandboxSubnets)) return `${plain} is in the sandboxes' subnet, where the apps and add-on servers run`;
    const own = this.ownPorts.find((p) => p.port === port);
    if (own && this.isThisMachine(plain)) return `${plain}:${port} is slipway's own ${own.what}`;
    if (inAnyCidr(plain, this.allow)) return undefined;
    const range = refusedRangeOf(plain);
    const what = range ? describeKind(range.kind) : this.isThisMachine(plain) ? "this machine's own address" : undefined;
    if (!what) return undefined;
    return `${plain} is ${what}; the operator can allow it with --egress-allow ${singleAddressCidr(plain)}`;
  }

  /**
   * Every address `host` resolves to, each checked; throws EgressRefusedError naming the first
   * refused one (a name that resolves to one refused address is refused whole: the next lookup
   * could prefer it), or the resolver's error.
   */
  async resolve(host: string, port: number): Promise<ResolvedAddress[]> {
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    const addresses = isIP(bare) ? [{ address: bare, family: isIP(bare) }] : await this.lookupAll(bare);
    for (const a of addresses) {
      const reason = this.refusal(a.address, port);
      if (reason) throw new EgressRefusedError(bare === a.address ? reason : `${bare} resolves to ${a.address}: ${reason}`);
    }
    return addresses;
  }

  /** The same, as a refusal text (undefined when every address may be reached). */
  async refusalOfHost(host: string, port: number): Promise<string | undefined> {
    try {
      await this.resolve(host, port);
      return undefined;
    } catch (error) {
      if (error instanceof EgressRefusedError) return error.message;
      return `the host name ${host} does not resolve`;
    }
  }

  /** A `lookup` for net.connect, tls.connect and http(s) requests to `port`. */
  lookup(port: number): LookupFunction {
    return (hostname, options, callback) => {
      this.resolve(hostname, port).then(
        (addresses) => {
          const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
          const first = wanted[0];
          if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
          if (options.all) return (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, wanted);
          callback(null, first.address, first.family);
        },
        (error: Error) => callback(error as NodeJS.ErrnoException, '', 0),
      );
    };
  }

  /**
   * Options for net.connect or tls.connect to `host:port` that connect only to a checked
   * address. A literal address is never looked up by net, so it is checked here and throws.
   */
  connectOptions(host: string, port: number): Pick<TcpNetConnectOpts, 'host' | 'port' | 'lookup'> {
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    if (isIP(bare)) {
      const reason = this.refusal(bare, port);
      if (reason) throw new EgressRefusedError(reason);
    }
    return { host: bare, port, lookup: this.lookup(port) };
  }

  /** An http agent whose every connection (keep-alive, redirects) goes through the guard. */
  httpAgent(options: AgentOptions = {}): HttpAgent {
    return guarded(new HttpAgent(options), this);
  }

  /** The same for https. */
  httpsAgent(options: HttpsAgentOptions = {}): HttpsAgent {
    return guarded(new HttpsAgent(options), this);
  }

  private async lookupAll(host: string): Promise<ResolvedAddress[]> {
    const resolver = this.resolver;
    if (!resolver) {
      return new Promise((resolve, reject) =>
        systemLookup(host, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
      );
    }
    const ask = (family: 4 | 6) =>
      new Promise<ResolvedAddress[]>((resolve, reject) =>
        (family === 4 ? resolver.resolve4.bind(resolver) : resolver.resolve6.bind(resolver))(host, (error, list) =>
          error ? reject(error) : resolve(list.map((address) => ({ address, family }))),
        ),
      );
    const [v4, v6] = await Promise.allSettled([ask(4), ask(6)]);
    const found = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
    if (found.length === 0) throw Object.assign(new Error(`${host} does not resolve`), { code: 'ENOTFOUND' });
    return found;
  }

  private isThisMachine(address: string): boolean {
    const range = refusedRangeOf(address);
    if (range?.kind === 'loopback' || address === '0.0.0.0' || address === '::') return true;
    if (this.policy.listen && effectiveAddress(this.policy.listen) === address) return true;
    return Object.values(networkInterfaces())
      .flat()
      .some((i) => i !== undefined && effectiveAddress(i.address) === address);
  }
}

/**
 * Puts the guard under an agent's `createConnection`, which http(s) calls for each new socket
 * with the request's host and port: a name gets the guard's `lookup`, an address is checked
 * (net would connect to it without a lookup), and a refusal fails the request.
 */
function guarded<A extends HttpAgent>(agent: A, guard: EgressGuard): A {
  const create = (agent as unknown as { createConnection: (o: object, cb: (e: Error | null, s?: Duplex) => void) => Socket | undefined })
    .createConnection;
  (agent as unknown as { createConnection: unknown }).createConnection = function (
    this: A,
    options: { host?: string; hostname?: string; port?: number | string },
    callback: (error: Error | null, socket?: Duplex) => void,
  ) {
    const port = Number(options.port);
    let checked: ReturnType<EgressGuard['connectOptions']>;
    try {
      checked = guard.connectOptions(options.hostname ?? options.host ?? 'localhost', port);
    } catch (error) {
      process.nextTick(() => callback(error as Error));
      return undefined;
    }
    return create.call(this, { ...options, ...checked }, callback);
  };
  return agent;
}
