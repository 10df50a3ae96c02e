/** The unix user each application's builds and instances run as, one per app. */
export const sql = `
CREATE TABLE app_users (
  app_id TEXT PRIMARY KEY REFERENCES apps(id) ON DELETE CASCADE,
  name TEXT NOT NULL UNIQUE,
  uid INTEGER NOT NULL UNIQUE,
  created_at TEXT NOT NULL
);
`;
