/**
 * Per-organisation quotas set by an administrator (`slipway org quota set`); a null column, or
 * no row, means the daemon's default for that quota (`--default-quota`).
 */
export const sql = `
CREATE TABLE org_quotas (
  org_id TEXT PRIMARY KEY REFERENCES orgs(id) ON DELETE CASCADE,
  apps INTEGER CHECK (apps IS NULL OR apps >= 0),
  addons INTEGER CHECK (addons IS NULL OR addons >= 0),
  instances INTEGER CHECK (instances IS NULL OR instances >= 0),
  memory_bytes INTEGER CHECK (memory_bytes IS NULL OR memory_bytes >= 0),
  max_flavor TEXT,
  workers INTEGER CHECK (workers IS NULL OR workers >= 0),
  runs INTEGER CHECK (runs IS NULL OR runs >= 0),
  domains INTEGER CHECK (domains IS NULL OR domains >= 0)
);
`;
