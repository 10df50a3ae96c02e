import * as acme from 'acme-client';
import { X509Certificate } from 'node:crypto';
import { Agent } from 'node:https';
import type { EgressGuard } from '../network/egress-guard.js';
import type { Store } from '../store/store.js';
import type { AcmeChallengeResponder } from './acme-challenge-responder.js';
import { acmeRetryDelayMs } from './acme-backoff.js';

export interface AcmeIssuerOptions {
  store: Store;
  /** The ACME directory, e.g. a CA's production or staging URL, or a test server's. */
  directoryUrl: string;
  email?: string;
  challenges: AcmeChallengeResponder;
  /** PEM certificates to trust for the directory's TLS (a private ACME CA); absent: the system's. */
  directoryCaPem?: string;
  /** The wait after a name's first failed order (see acme-backoff.ts). */
  retryBaseMs?: number;
  /** The daemon's egress guard: the directory, and every URL it sends the client to, redirects included. */
  egress?: EgressGuard;
}

/**
 * Obtains certificates by ACME HTTP-01: the account key lives in the store (one account per
 * directory), each order's outcome too, and the certificate with its key once issued.
 */
export class AcmeIssuer {
  private client: acme.Client | undefined;

  constructor(private readonly options: AcmeIssuerOptions) {
    // acme-client talks through its own axios instance: the daemon has one ACME directory. Its
    // agents make every connection (each redirect too) through the egress guard.
    const ca = options.directoryCaPem ? { ca: options.directoryCaPem } : {};
    if (options.egress) {
      acme.axios.defaults.httpAgent = options.egress.httpAgent({ keepAlive: true });
      acme.axios.defaults.httpsAgent = options.egress.httpsAgent({ ...ca, keepAlive: true });
    } else if (options.directoryCaPem) {
      acme.axios.defaults.httpsAgent = new Agent({ ...ca, keepAlive: true });
    }
  }

  private async account(): Promise<acme.Client> {
    if (this.client) return this.client;
    const { store, directoryUrl, email } = this.options;
    let saved = store.acme.account(directoryUrl);
    if (!saved) {
      const key = (await acme.crypto.createPrivateEcdsaKey()).toString();
      store.acme.saveAccount(directoryUrl, key, null);
      saved = store.acme.account(directoryUrl)!;
    }
    const client = new acme.Client({
      directoryUrl,
      accountKey: saved.account_key_pem,
      ...(saved.account_url ? { accountUrl: saved.account_url } : {}),
    });
    if (!saved.account_url) {
      await client.createAccount({ termsOfServiceAgreed: true, ...(email ? { contact: [`mailto:${email}`] } : {}) });
      store.acme.saveAccount(directoryUrl, saved.account_key_pem, client.getAccountUrl());
    }
    this.client = client;
    return client;
  }

  /** Whether a name may be ordered now: not while it waits after failed orders. */
  mayOrder(fqdn: string, now = Date.now()): boolean {
    const retryAfter = this.options.store.acme.order(fqdn)?.retry_after;
    return !retryAfter || new Date(retryAfter).getTime() <= now;
  }

  /** Orders a certificate for one name and stores it; throws (after recording why and when to try again) when the order fails. */
  async issue(fqdn: string): Promise<void> {
    const { store, challenges } = this.options;
    store.acme.saveOrder(fqdn, 'pending', null, null);
    try {
      const client = await this.account();
      const [key, csr] = await acme.crypto.createCsr({ altNames: [fqdn] }, await acme.crypto.createPrivateEcdsaKey());
      const certificatePem = await client.auto({
        csr,
        termsOfServiceAgreed: true,
        challengePriority: ['http-01'],
        // The CA checks the challenge through the router; slipway does not look itself (that
        // would send a request to wherever the name's DNS points).
        skipChallengeVerification: true,
        challengeCreateFn: async (_authz, challenge, keyAuthorization) => challenges.set(challenge.token, keyAuthorization),
        challengeRemoveFn: async (_authz, challenge) => challenges.remove(challenge.token),
      });
      const leaf = new X509Certificate(certificatePem);
      if (!store.domains.byName(fqdn)) return;
      store.certificates.put({
        fqdn,
        source: 'acme',
        certificate_pem: certificatePem,
        private_key_pem: key.toString(),
        not_before: new Date(leaf.validFrom).toISOString(),
        not_after: new Date(leaf.validTo).toISOString(),
      });
      store.acme.saveOrder(fqdn, 'valid', null, null);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const failed = store.acme.recordFailure(fqdn, reason.slice(0, 500), (failures) =>
        acmeRetryDelayMs(failures, this.options.retryBaseMs),
      );
      const next = failed?.retry_after ? ` (failure ${failed.failures} in a row; next try after ${failed.retry_after})` : '';
      throw new Error(`${reason}${next}`, { cause: error });
    }
  }
}
