import { X509Certificate } from 'node:crypto';
import type { Store } from '../store/store.js';
import type { Router, TlsCertificate } from '../router/router.js';
import type { DomainService, ServedCertificate } from '../domains/domain-service.js';
import type { InternalCa, IssuedCertificate } from './internal-ca.js';
import type { AcmeIssuer } from './acme-issuer.js';
import { canUseAcme } from './acme-eligible.js';

export interface CertificateManagerOptions {
  store: Store;
  router: Router;
  ca: InternalCa;
  /**
   * Signs custom names until ACME or an upload gives them a real certificate: nobody is asked to
   * trust it, so a tenant adding a name gets nothing clients of the platform CA would accept.
   */
  provisional: InternalCa;
  /** Apps are reached at `<app_id>.<domain>`: the internal CA signs `*.<domain>` (see platformNames). */
  platformDomain: string;
  /** Absent: no ACME directory configured, every name gets the internal CA's certificate. */
  acme?: AcmeIssuer;
  /** Re-applies the routing table (domains changed). */
  applyRoutes(): Promise<void>;
  /** How often certificates are checked for renewal (default 12 hours). */
  checkIntervalMs?: number;
  /** New domains wait for their DNS proof before they are routed or certified. */
  requireVerification?: boolean;
  log(line: string): void;
}

/** A certificate is renewed when less than this share of its lifetime is left (30 days of 90). */
const RENEW_WHEN_LEFT = 1 / 3;

/**
 * The names of the internal certificate for `<app_id>.<domain>`: the wildcard, or each app's host
 * when the domain is a single label (the default, localhost). There no client honours a wildcard
 * (`*.localhost`: OpenSSL, Node and browsers want two labels after the `*`), and the router refuses
 * one as a host name (src/router/validate.ts), which made it drop the whole set of certificates.
 * Before the first app such a domain has no name to certify: empty.
 */
function platformNames(platformDomain: string, appIds: string[]): string[] {
  return platformDomain.includes('.') ? [`*.${platformDomain}`] : appIds.map((id) => `${id}.${platformDomain}`);
}

function dueForRenewal(notBefore: Date, notAfter: Date, now = Date.now()): boolean {
  const lifetime = notAfter.getTime() - notBefore.getTime();
  return notAfter.getTime() - now < lifetime * RENEW_WHEN_LEFT;
}

/**
 * Decides which certificate the router serves for every name and keeps them fresh: for each
 * custom domain an uploaded certificate first, then one obtained by ACME, then the internal CA's
 * (which also covers every `<app_id>.<domain>`). ACME orders start when a domain is added and
 * again when a certificate nears its end; the router swaps certificates without dropping
 * connections.
 */
export class CertificateManager implements DomainService {
  private readonly internal = new Map<string, IssuedCertificate & { notBefore: Date }>();
  private readonly served_ = new Map<string, ServedCertificate>();
  private readonly ordering = new Set<string>();
  private applying: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private readonly alsoStop: Array<() => void> = [];
  private lastRouterError = '';
  private appliedFingerprint = '';
  /** Without an HTTPS listener nothing is served: start() is not called. */
  private started = false;

  readonly requireVerification: boolean;

  constructor(private readonly options: CertificateManagerOptions) {
    this.requireVerification = options.requireVerification ?? false;
    options.store.certificates.onChange(() => {
      if (this.started) void this.refresh();
    });
  }

  async start(): Promise<void> {
    this.started = true;
    await this.refresh();
    this.orderDue();
    this.timer = setInterval(() => void this.check(), this.options.checkIntervalMs ?? 12 * 3_600_000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    for (const stop of this.alsoStop) stop();
  }

  /** Something that runs beside the manager (the domain verifier) and stops with it. */
  onStop(stop: () => void): void {
    this.alsoStop.push(stop);
  }

  async changed(): Promise<void> {
    await this.options.applyRoutes();
    if (!this.started) return;
    await this.refresh();
    this.orderDue();
  }

  served(fqdn: string): ServedCertificate | undefined {
    return this.served_.get(fqdn);
  }

  private async check(): Promise<void> {
    for (const [name, cert] of this.internal) if (dueForRenewal(cert.notBefore, cert.notAfter)) this.internal.delete(name);
    await this.refresh();
    this.orderDue();
  }

  /** Starts an ACME order for each eligible domain without a fresh certificate (one at a time per name). */
  private orderDue(): void {
    const { acme, store, log } = this.options;
    if (!acme) return;
    for (const domain of store.domains.all()) {
      if (!canUseAcme(domain.fqdn) || this.ordering.has(domain.fqdn) || domain.verified_at === null) continue;
      // Failed orders back off per name: one tenant's names cannot spend the shared account's limits.
      if (!acme.mayOrder(domain.fqdn)) continue;
      const current = store.certificates.of(domain.fqdn).find((c) => c.source === 'acme');
      if (current && !dueForRenewal(new Date(current.not_before), new Date(current.not_after))) continue;
      this.ordering.add(domain.fqdn);
      void acme
        .issue(domain.fqdn)
        .then(() => log(`ACME: ${current ? 'renewed' : 'obtained'} the certificate of ${domain.fqdn}.`))
        .catch((error) => log(`ACME: no certificate for ${domain.fqdn}: ${(error as Error).message}`))
        .finally(() => this.ordering.delete(domain.fqdn));
    }
  }

  private async internalFor(names: string | string[], issuer: InternalCa): Promise<IssuedCertificate & { notBefore: Date }> {
    const list = typeof names === 'string' ? [names] : names;
    const name = list.join(',');
    let cert = this.internal.get(name);
    if (!cert) {
      const issued = await issuer.issue(list);
      cert = { ...issued, notBefore: new Date(new X509Certificate(issued.certificatePem).validFrom) };
      this.internal.set(name, cert);
    }
    return cert;
  }

  /** Recomputes the served set and hands it to the router (calls run one after the other). */
  refresh(): Promise<void> {
    const run = this.applying.then(() => this.applyNow());
    this.applying = run.catch(() => undefined);
    return run;
  }

  private async applyNow(): Promise<void> {
    const { store, platformDomain } = this.options;
    const certs: TlsCertificate[] = [];
    const served = new Map<string, ServedCertificate>();
    const names = platformNames(
      platformDomain,
      store.apps.all().map((app) => app.id),
    );
    const platform = names.length > 0 ? await this.internalFor(names, this.options.ca) : undefined;
    if (platform) certs.push({ names: platform.names, certificatePem: platform.certificatePem, privateKeyPem: platform.privateKeyPem });
    const now = Date.now();
    for (const domain of store.domains.all()) {
      // A domain waiting for its DNS proof gets no certificate (and no route).
      if (domain.verified_at === null) continue;
      const stored = store.certificates.of(domain.fqdn).filter((c) => new Date(c.not_after).getTime() > now);
      const best = stored.find((c) => c.source === 'uploaded') ?? stored.find((c) => c.source === 'acme');
      if (best) {
        certs.push({ names: [domain.fqdn], certificatePem: best.certificate_pem, privateKeyPem: best.private_key_pem });
        served.set(domain.fqdn, { source: best.source, not_after: best.not_after });
        continue;
      }
      const provisional = await this.internalFor(domain.fqdn, this.options.provisional);
      certs.push({ names: provisional.names, certificatePem: provisional.certificatePem, privateKeyPem: provisional.privateKeyPem });
      served.set(domain.fqdn, { source: 'provisional', not_after: provisional.notAfter.toISOString() });
    }
    for (const name of this.internal.keys()) {
      if (name !== platform?.names.join(',') && !store.domains.byName(name)) this.internal.delete(name);
    }
    // Routes change far more often than certificates: the router only hears of real changes.
    const fingerprint = certs.map((c) => `${c.names.join(',')}\n${c.certificatePem}`).join('\n');
    if (fingerprint === this.appliedFingerprint) return;
    try {
      await this.options.router.applyCertificates(certs);
      this.appliedFingerprint = fingerprint;
      this.served_.clear();
      for (const [name, cert] of served) this.served_.set(name, cert);
      this.lastRouterError = '';
    } catch (error) {
      const message = (error as Error).message;
      if (message !== this.lastRouterError) this.options.log(`The router did not take the certificates: ${message}`);
      this.lastRouterError = message;
      // An engine that applies certificates one by one names those it refused: the others are
      // served, and the refused names keep what they had (not tried again until something changes).
      const refused = (error as { refusedNames?: unknown }).refusedNames;
      if (Array.isArray(refused)) {
        this.appliedFingerprint = fingerprint;
        for (const [name, cert] of served) if (!refused.includes(name)) this.served_.set(name, cert);
        for (const name of [...this.served_.keys()]) if (!served.has(name)) this.served_.delete(name);
      }
    }
  }
}
