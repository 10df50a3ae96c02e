/**
 * Add-ons, the links that hand their variables to applications, links between applications,
 * and the configuration an application exposes to the applications linked to it.
 */
export const sql = `
CREATE TABLE addons (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  provider TEXT NOT NULL,
  name TEXT NOT NULL,
  config_json TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (org_id, name)
);
CREATE TABLE addon_links (
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  addon_id TEXT NOT NULL REFERENCES addons(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  PRIMARY KEY (app_id, addon_id)
);
CREATE INDEX addon_links_by_addon ON addon_links (addon_id);
CREATE TABLE app_links (
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  target_app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  PRIMARY KEY (app_id, target_app_id),
  CHECK (app_id <> target_app_id)
);
CREATE INDEX app_links_by_target ON app_links (target_app_id);
CREATE TABLE published_config (
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (app_id, name)
);
`;
