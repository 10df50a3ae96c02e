/** API tokens that end: an expiry chosen at creation, a revocation, and when each was last used. */
export const sql = `
ALTER TABLE api_tokens ADD COLUMN expires_at TEXT;
ALTER TABLE api_tokens ADD COLUMN revoked_at TEXT;
ALTER TABLE api_tokens ADD COLUMN last_used_at TEXT;
`;
