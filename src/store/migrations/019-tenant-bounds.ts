/**
 * Bounds on what one organisation holds (docs/security.md, "Every shared resource has a bound
 * per tenant"): the quotas of cron jobs, drains and their buffers, webhooks, e-mail
 * notifications and manual backups; and the backup objects of deleted add-ons, kept for a grace
 * period before the backup schedule's sweep removes them. A trigger records them before the
 * add-on's rows cascade away, so no code path that deletes an add-on can forget them.
 */
export const sql = `
ALTER TABLE org_quotas ADD COLUMN cron_jobs INTEGER CHECK (cron_jobs IS NULL OR cron_jobs >= 0);
ALTER TABLE org_quotas ADD COLUMN drains INTEGER CHECK (drains IS NULL OR drains >= 0);
ALTER TABLE org_quotas ADD COLUMN drain_buffer_bytes INTEGER CHECK (drain_buffer_bytes IS NULL OR drain_buffer_bytes >= 0);
ALTER TABLE org_quotas ADD COLUMN webhooks INTEGER CHECK (webhooks IS NULL OR webhooks >= 0);
ALTER TABLE org_quotas ADD COLUMN notify_emails INTEGER CHECK (notify_emails IS NULL OR notify_emails >= 0);
ALTER TABLE org_quotas ADD COLUMN backups INTEGER CHECK (backups IS NULL OR backups >= 0);

CREATE TABLE deleted_addon_backups (
  backup_id TEXT PRIMARY KEY,
  addon_id TEXT NOT NULL,
  object_key TEXT NOT NULL,
  deleted_at TEXT NOT NULL
);

CREATE TRIGGER addon_deleted_keeps_backup_objects BEFORE DELETE ON addons
BEGIN
  INSERT OR IGNORE INTO deleted_addon_backups (backup_id, addon_id, object_key, deleted_at)
    SELECT id, addon_id, object_key, strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM addon_backups WHERE addon_id = OLD.id;
END;
`;
