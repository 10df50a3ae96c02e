/**
 * Add-on backups and their schedules. A PostgreSQL backup names the cluster-wide base backup it
 * rests on (`base_key`; one base can carry the backups of several add-ons) and the restore point
 * at which its row counts were taken; a Redis backup names its snapshot object.
 */
export const sql = `
CREATE TABLE addon_backups (
  id TEXT PRIMARY KEY,
  addon_id TEXT NOT NULL REFERENCES addons(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('scheduled', 'manual', 'safety')),
  object_key TEXT NOT NULL,
  restore_point TEXT,
  created_at TEXT NOT NULL,
  finished_at TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  counts_json TEXT NOT NULL,
  verification TEXT NOT NULL DEFAULT 'pending' CHECK (verification IN ('pending', 'verified', 'failed')),
  verification_detail TEXT NOT NULL DEFAULT '',
  verified_at TEXT
);
CREATE INDEX addon_backups_by_addon ON addon_backups (addon_id, created_at);

CREATE TABLE addon_backup_schedules (
  addon_id TEXT PRIMARY KEY REFERENCES addons(id) ON DELETE CASCADE,
  at TEXT NOT NULL,
  keep_days INTEGER NOT NULL
);
`;
