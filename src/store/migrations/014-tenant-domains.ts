/**
 * Domain verification and ACME backoff. A domain may wait for its owner to prove it (a DNS TXT
 * record holding its token) before it is routed or certified; domains that existed before are
 * taken as verified, so an upgrade unroutes nothing. Failed ACME orders count per name, and the
 * next one waits until retry_after.
 */
export const sql = `
ALTER TABLE app_domains ADD COLUMN verification_token TEXT;
ALTER TABLE app_domains ADD COLUMN verified_at TEXT;
UPDATE app_domains SET verified_at = created_at;
ALTER TABLE acme_orders ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE acme_orders ADD COLUMN retry_after TEXT;
`;
