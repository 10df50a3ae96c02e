/**
 * The router contract: the platform owns the routing table and decides when to switch (after
 * health checks); the engine only forwards.
 *
 * Hosts are lowercase ASCII, exact (`app_x.example.com`) or wildcard (`*.example.com`, which
 * matches any deeper sub-domain that has no exact entry). An empty upstream list means the app
 * exists but nothing runs (503 page); a host absent from the table is unknown (404 page).
 */
export interface Upstream {
  address: string;
  port: number;
}

export interface HostRoute {
  appId: string;
  upstreams: readonly Upstream[];
  /** Plain-HTTP requests get a 301 to the same URL over HTTPS. */
  forceHttps: boolean;
}

export type RoutingTable = ReadonlyMap<string, HostRoute>;

/** A certificate served by SNI for each of its names (wildcards allowed); the chain follows the leaf in certificatePem. */
export interface TlsCertificate {
  names: readonly string[];
  certificatePem: string;
  privateKeyPem: string;
}

/** One request routed to an app (not the 404/503 pages, not ACME challenges). */
export interface AccessRecord {
  time: Date;
  appId: string;
  host: string;
  /** The client's address as the router saw it (the TCP peer). */
  client: string;
  method: string;
  path: string;
  status: number;
  /** Response bytes sent to the client. */
  bytes: number;
  durationMs: number;
  /** The upstream that answered, `address:port` (empty when none did). */
  instance: string;
  tls: boolean;
}

/** What every engine is built with. */
export interface RouterOptions {
  /** IPv4 address both listeners bind, e.g. "0.0.0.0". */
  listenHost: string;
  /** Plain HTTP port. */
  port: number;
  /** HTTPS port (HTTP/2 and HTTP/1.1, SNI); 0 or absent: no HTTPS listener. */
  httpsPort?: number;
  /** Folder the engine owns (configuration, sockets, certificates). */
  workDir: string;
  /**
   * CIDRs of proxies in front of slipway: their X-Forwarded-For/-Proto/-Host are kept and
   * extended; anyone else's are replaced.
   */
  trustedProxies?: readonly string[];
  /** On the HTTP port, `/.well-known/acme-challenge/*` for any host goes here (the daemon's ACME responder). */
  acmeChallenge?: Upstream;
  /** Called once per request routed to an app. */
  onRequest?: (record: AccessRecord) => void;
}

/**
 * What the platform asks of the engine, and all a test double must do. The engine's own figures
 * (connections open, access records dropped) are not part of it: the daemon reads them from the
 * one engine it builds (HaproxyRouter), and nothing else needs them.
 */
export interface Router {
  start(): Promise<void>;
  /** Applies a whole table; requests in flight on removed upstreams finish (drain). */
  apply(table: RoutingTable): Promise<void>;
  /** Replaces the whole set of certificates; connections open stay open. */
  applyCertificates(certs: readonly TlsCertificate[]): Promise<void>;
  /** Drains and stops the engine (`slipway system stop`). */
  stop(): Promise<void>;
  /** The daemon lets go of the engine, which goes on serving; the next daemon's start() adopts it. */
  detach(): Promise<void>;
}
