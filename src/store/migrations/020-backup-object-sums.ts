/**
 * The size and SHA-256 of every object the add-on backups put into the backup store (PostgreSQL
 * base backups, archived WAL, Redis snapshots), recorded as the bytes went in. They live here,
 * not beside the objects: the store is what may be damaged or altered, and a verification or
 * restore checks each object it uses against this row first. Objects stored before this
 * migration have none (src/backups/README.md says what happens to them).
 */
export const sql = `
CREATE TABLE backup_object_sums (
  object_key TEXT PRIMARY KEY,
  size_bytes INTEGER NOT NULL CHECK (size_bytes >= 0),
  sha256 TEXT NOT NULL CHECK (length(sha256) = 64),
  recorded_at TEXT NOT NULL
);
`;
