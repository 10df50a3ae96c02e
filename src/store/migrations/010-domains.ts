/**
 * Custom domains, the certificates slipway serves for them and its ACME state. A domain
 * belongs to one application on the whole platform (the primary key), stored in its ASCII form.
 */
export const sql = `
CREATE TABLE app_domains (
  fqdn TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  favourite INTEGER NOT NULL DEFAULT 0 CHECK (favourite IN (0, 1)),
  created_at TEXT NOT NULL
);
CREATE INDEX app_domains_by_app ON app_domains(app_id);
CREATE UNIQUE INDEX app_domains_one_favourite ON app_domains(app_id) WHERE favourite = 1;

-- Certificates obtained by ACME or uploaded by a user, one per domain and source; those of the
-- internal CA are issued at each start and not stored.
CREATE TABLE domain_certificates (
  fqdn TEXT NOT NULL REFERENCES app_domains(fqdn) ON DELETE CASCADE,
  source TEXT NOT NULL CHECK (source IN ('acme', 'uploaded')),
  certificate_pem TEXT NOT NULL,
  private_key_pem TEXT NOT NULL,
  not_before TEXT NOT NULL,
  not_after TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (fqdn, source)
);

-- The ACME account of each directory slipway talked to.
CREATE TABLE acme_accounts (
  directory_url TEXT PRIMARY KEY,
  account_key_pem TEXT NOT NULL,
  account_url TEXT,
  created_at TEXT NOT NULL
);

-- The last order for each domain: what happened, so users and restarts can see it.
CREATE TABLE acme_orders (
  fqdn TEXT PRIMARY KEY REFERENCES app_domains(fqdn) ON DELETE CASCADE,
  state TEXT NOT NULL CHECK (state IN ('pending', 'valid', 'invalid')),
  order_url TEXT,
  error TEXT,
  updated_at TEXT NOT NULL
);
`;
