/** The certificate the router serves for a name, as users see it. */
export interface ServedCertificate {
  /** internal: the platform CA (platform names only); provisional: an issuer nobody trusts, until ACME or an upload. */
  source: 'acme' | 'uploaded' | 'internal' | 'provisional';
  not_after: string;
}

/**
 * What the API asks of the edge when domains change: the daemon implements it (routes and
 * certificates follow the store); absent when only the control plane runs.
 */
export interface DomainService {
  /** Routes and certificates catch up with the store (resolves once the router serves them). */
  changed(): Promise<void>;
  /** New domains wait for their DNS proof (`--require-domain-verification`) before they are routed. */
  readonly requireVerification: boolean;
  /** The certificate served for a domain now, if any. */
  served(fqdn: string): ServedCertificate | undefined;
}
