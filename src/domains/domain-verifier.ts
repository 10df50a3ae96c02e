import { Resolver } from 'node:dns/promises';
import type { Store } from '../store/store.js';

/** The DNS name whose TXT record proves a domain: `_slipway-challenge.<domain>` (a wildcard's base). */
export function verificationRecordName(fqdn: string): string {
  return `_slipway-challenge.${fqdn.startsWith('*.') ? fqdn.slice(2) : fqdn}`;
}

export interface DomainVerifierOptions {
  store: Store;
  /** `address:port` of the DNS server to ask; absent: the system's resolvers. */
  resolver?: string;
  /** How often waiting domains are looked up (default 5 s). */
  intervalMs?: number;
  /** Routes and certificates catch up once a domain is proven. */
  onVerified(fqdn: string): Promise<void>;
  log(line: string): void;
}

/**
 * With `--require-domain-verification`, a new domain waits unrouted and without certificates
 * until the TXT record `_slipway-challenge.<domain>` holds the token `domain add` printed: a
 * tenant cannot take traffic or certificates for a name whose DNS it does not control.
 * Waiting domains are looked up at each tick; a lookup that fails is tried at the next one.
 */
export class DomainVerifier {
  private readonly resolver = new Resolver({ timeout: 2000, tries: 2 });
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(private readonly options: DomainVerifierOptions) {
    if (options.resolver) this.resolver.setServers([options.resolver]);
  }

  start(): void {
    this.timer = setInterval(() => void this.checkNow(), this.options.intervalMs ?? 5000);
    this.timer.unref();
    void this.checkNow();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Looks up every waiting domain once (a run already going is not doubled). */
  async checkNow(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (const domain of this.options.store.domains.pendingVerification()) {
        if (!domain.verification_token || !(await this.holdsToken(domain.fqdn, domain.verification_token))) continue;
        if (!this.options.store.domains.markVerified(domain.fqdn, domain.verification_token)) continue;
        this.options.log(`Domain ${domain.fqdn} is verified (${verificationRecordName(domain.fqdn)}): it is routed now.`);
        await this.options
          .onVerified(domain.fqdn)
          .catch((error) => this.options.log(`Routing ${domain.fqdn}: ${(error as Error).message}`));
      }
    } finally {
      this.running = false;
    }
  }

  private async holdsToken(fqdn: string, token: string): Promise<boolean> {
    try {
      const records = await this.resolver.resolveTxt(verificationRecordName(fqdn));
      return records.some((chunks) => chunks.join('').trim() === token);
    } catch {
      // No such record yet (NXDOMAIN, NODATA) or the resolver did not answer: the next tick asks again.
      return false;
    }
  }
}
