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
         ON CONFLICT (fqdn) DO UPDATE SET state = excluded.state, order_url = excluded.order_url, error = excluded.error, updated_at = excluded.updated_at`,
      )
      .run({ fqdn, state, order_url: orderUrl, error, updated_at: new Date().toISOString() });
  }
}
