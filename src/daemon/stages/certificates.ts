import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import type { Store } from '../../store/store.js';
import type { Router } from '../../router/router.js';
import type { DaemonOptions } from '../options.js';
import { InternalCa } from '../../certificates/internal-ca.js';
import { AcmeIssuer } from '../../certificates/acme-issuer.js';
import { CertificateManager } from '../../certificates/certificate-manager.js';
import type { AcmeChallengeResponder } from '../../certificates/acme-challenge-responder.js';
import { DomainVerifier } from '../../domains/domain-verifier.js';
import type { EgressGuard } from '../../network/egress-guard.js';
import type { AppRuntime } from '../../serving/app-runtime.js';
import type { DaemonBase, EdgeBuilt } from './stage.js';

/**
 * The certificate room of the daemon: the internal CA (created on first start in
 * <data-dir>/ca), ACME when a directory is configured, and the manager that feeds the router.
 */
export async function startCertificates(input: {
  options: DaemonOptions;
  store: Store;
  router: Router;
  /** Told when routes change, so new app hosts get their certificate. */
  onRoutesApplied(listener: () => void): void;
  challenges: AcmeChallengeResponder;
  applyRoutes(): Promise<void>;
  /** The daemon's egress guard, for the ACME directory. */
  egress?: EgressGuard;
  log(line: string): void;
}): Promise<{ manager: CertificateManager; caCertificatePath: string }> {
  const { options, store, router, challenges, log } = input;
  const ca = await InternalCa.openOrCreate(join(options.dataDir, 'ca'), options.domain, { permittedDomain: options.domain });
  if (ca.retiredTo) {
    log(
      `The internal CA was not constrained to ${options.domain}: a new CA that can only sign names under ${options.domain} replaces it at ${ca.certificatePath}. ` +
        `Clients must trust the new one and should stop trusting the old one (kept, unused, in ${ca.retiredTo}).`,
    );
  }
  const provisional = await InternalCa.openOrCreate(join(options.dataDir, 'ca', 'provisional'), options.domain, {
    commonName: 'slipway provisional issuer - not to be trusted',
  });
  const settings = options.certificates ?? {};
  const acme = settings.acmeDirectory
    ? new AcmeIssuer({
        store,
        directoryUrl: settings.acmeDirectory,
        email: settings.acmeEmail,
        challenges,
        directoryCaPem: settings.acmeDirectoryCaFile ? readFileSync(settings.acmeDirectoryCaFile, 'utf8') : undefined,
        retryBaseMs: settings.acmeRetryBaseMs,
        egress: input.egress,
      })
    : undefined;
  const manager = new CertificateManager({
    store,
    router,
    ca,
    provisional,
    platformDomain: options.domain,
    acme,
    applyRoutes: input.applyRoutes,
    checkIntervalMs: settings.checkIntervalMs,
    requireVerification: settings.requireDomainVerification ?? false,
    log,
  });
  if (settings.requireDomainVerification) {
    const verifier = new DomainVerifier({ store, resolver: settings.dnsResolver, onVerified: () => manager.changed(), log });
    verifier.start();
    manager.onStop(() => verifier.stop());
  } else {
    // Nothing waits without the flag: domains that waited under an earlier start are routed now.
    const released = store.domains.verifyAllPending();
    if (released > 0) log(`${released} domain(s) waiting for their DNS proof are routed: --require-domain-verification is off.`);
  }
  if (options.httpsPort > 0) {
    await manager.start();
    input.onRoutesApplied(() => void manager.refresh());
  }
  return { manager, caCertificatePath: ca.certificatePath };
}

/**
 * Certificates: the internal CA, ACME when a directory is given, the manager feeding the router
 * and renewing. Needs: `store`, the edge's `router` and `acmeChallenges`, `runtime` (its routes),
 * `egress`. Provides: `certificates` (the manager, the CA's certificate path).
 */
export async function certificates(
  needs: DaemonBase & Pick<EdgeBuilt, 'router' | 'acmeChallenges'> & { store: Store; runtime: AppRuntime; egress: EgressGuard },
) {
  const { options, store, router, acmeChallenges, runtime, egress, stoppers, log } = needs;
  const certificates = await startCertificates({
    options,
    store,
    router,
    challenges: acmeChallenges,
    applyRoutes: () => runtime.applyRoutes(),
    onRoutesApplied: (listener) => runtime.onRoutesApplied(listener),
    egress,
    log,
  });
  stoppers.control('certificates', () => certificates.manager.stop());
  return { certificates };
}
