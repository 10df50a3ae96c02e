import type { Db } from './database.js';

export type StoredCertificateSource = 'acme' | 'uploaded';

export interface StoredCertificate {
  fqdn: string;
  source: StoredCertificateSource;
  certificate_pem: string;
  private_key_pem: string;
  not_before: string;
  not_after: string;
  updated_at: string;
}

type Listener = () => void;

/** Certificates obtained by ACME or uploaded, one per domain and source (removed with the domain). */
export class CertificateRepository {
  private readonly listeners = new Set<Listener>();

  constructor(private readonly db: Db) {}

  onChange(listener: Listener): void {
    this.listeners.add(listener);
  }

  all(): StoredCertificate[] {
    return this.db.prepare('SELECT * FROM domain_certificates ORDER BY fqdn, source').all() as StoredCertificate[];
  }

  of(fqdn: string): StoredCertificate[] {
    return this.db.prepare('SELECT * FROM domain_certificates WHERE fqdn = ? ORDER BY source').all(fqdn) as StoredCertificate[];
  }

  put(input: Omit<StoredCertificate, 'updated_at'>): void {
    this.db
      .prepare(
        `INSERT INTO domain_certificates (fqdn, source, certificate_pem, private_key_pem, not_before, not_after, updated_at)
         VALUES (@fqdn, @source, @certificate_pem, @private_key_pem, @not_before, @not_after, @updated_at)
         ON CONFLICT (fqdn, source) DO UPDATE SET certificate_pem = excluded.certificate_pem, private_key_pem = excluded.private_key_pem,
           not_before = excluded.not_before, not_after = excluded.not_after, updated_at = excluded.updated_at`,
      )
      .run({ ...input, updated_at: new Date().toISOString() });
    for (const listener of this.listeners) listener();
  }

  remove(fqdn: string, source: StoredCertificateSource): boolean {
    const removed = this.db.prepare('DELETE FROM domain_certificates WHERE fqdn = ? AND source = ?').run(fqdn, source).changes > 0;
    if (removed) for (const listener of this.listeners) listener();
    return removed;
  }
}
