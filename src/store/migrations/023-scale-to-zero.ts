/**
 * Scale to zero (`slipway scale --min-instances 0`). The `instances` and `min_instances` columns
 * check 1 to 40, and SQLite changes a check only by rebuilding the table (whose deletion would
 * cascade to every table referring to apps), so the minimum of zero and the sleep are columns of
 * their own: `scale_to_zero` says the minimum is 0 (min_instances then holds 1), `asleep_since`
 * when the app's instances were stopped for lack of requests (null: awake). `instances` keeps the
 * count it wakes to.
 */
export const sql = `
ALTER TABLE apps ADD COLUMN scale_to_zero INTEGER NOT NULL DEFAULT 0 CHECK (scale_to_zero IN (0, 1));
ALTER TABLE apps ADD COLUMN asleep_since TEXT;
`;
