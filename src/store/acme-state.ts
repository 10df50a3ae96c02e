import type { Db } from './database.js';

export interface AcmeAccountRow {
  directory_url: string;
  account_key_pem: string;
  account_url: string | null;
}

export type AcmeOrderState = 'pending' | 'valid' | 'invalid';

export interface AcmeOrderRow {
  fqdn: string;
  state: AcmeOrderState;
  order_url: string | null;
  error: string | null;
  updated_at: string;
  /** Orders failed in a row (0 after a success). */
  failures: number;
  /** No new order before this time (ISO), after a failure. */
  retry_after: string | null;
}

/** slipway's ACME accounts (one per directory) and the last order of each domain. */
export class AcmeStateRepository {
  constructor(private readonly db: Db) {}

  account(directoryUrl: string): AcmeAccountRow | undefined {
    return this.db
      .prepare('SELECT directory_url, account_key_pem, account_url FROM acme_accounts WHERE directory_url = ?')
      .get(directoryUrl) as AcmeAccountRow | undefined;
  }

  saveAccount(directoryUrl: string, accountKeyPem: string, accountUrl: string | null): void {
    this.db
      .prepare(
        `INSERT INTO acme_accounts (directory_url, account_key_pem, account_url, created_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (directory_url) DO UPDATE SET account_key_pem = excluded.account_key_pem, account_url = excluded.account_url`,
      )
      .run(directoryUrl, accountKeyPem, accountUrl, new Date().toISOString());
  }

  order(fqdn: string): AcmeOrderRow | undefined {
    return this.db.prepare('SELECT * FROM acme_orders WHERE fqdn = ?').get(fqdn) as AcmeOrderRow | undefined;
  }

  /** Records an order's progress; ignored when the domain was removed meanwhile. */
  saveOrder(fqdn: string, state: AcmeOrderState, orderUrl: string | null, error: string | null): void {
    this.db
      .prepare(
        `INSERT INTO acme_orders (fqdn, state, order_url, error, updated_at)
         SELECT @fqdn, @state, @order_url, @error, @updated_at WHERE EXISTS (SELECT 1 FROM app_domains WHERE fqdn = @fqdn)
         ON CONFLICT (fqdn) DO UPDATE SET state = excluded.state, order_url = excluded.order_url, error = excluded.error, updated_at = excluded.updated_at,
           failures = CASE WHEN excluded.state = 'valid' THEN 0 ELSE failures END,
           retry_after = CASE WHEN excluded.state = 'valid' THEN NULL ELSE retry_after END`,
      )
      .run({ fqdn, state, order_url: orderUrl, error, updated_at: new Date().toISOString() });
  }

  /**
   * Records a failed order: one more failure in a row, and no new order for the name before
   * `delayMs(failures)` from now. Returns the row as saved (undefined when the domain is gone).
   */
  recordFailure(fqdn: string, error: string, delayMs: (failures: number) => number): AcmeOrderRow | undefined {
    return this.db.transaction(() => {
      this.saveOrder(fqdn, 'invalid', null, error);
      const row = this.order(fqdn);
      if (!row) return undefined;
      const failures = row.failures + 1;
      const retryAfter = new Date(Date.now() + delayMs(failures)).toISOString();
      this.db.prepare('UPDATE acme_orders SET failures = ?, retry_after = ? WHERE fqdn = ?').run(failures, retryAfter, fqdn);
      return { ...row, failures, retry_after: retryAfter };
    })();
  }
}
