/** Each application's disk budget in bytes, set by `slipway scale --disk`; null: the daemon's default. */
export const sql = `
ALTER TABLE apps ADD COLUMN disk_budget_bytes INTEGER CHECK (disk_budget_bytes IS NULL OR disk_budget_bytes > 0);
`;
