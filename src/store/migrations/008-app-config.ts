/** Per-application settings of the platform itself (`slipway config`), apart from the app's variables. */
export const sql = `
CREATE TABLE app_config (
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (app_id, name)
);
`;
