/**
 * Autoscaling: each application's ranges (`slipway scale --min-instances … --max-flavor …`; null:
 * fixed at its `instances` and `flavor`), its overrides of the autoscaler's settings (JSON of the
 * keys set, src/autoscaling/settings.ts), and the decisions the autoscaler took, with their reason,
 * which `slipway scale` prints.
 */
export const sql = `
ALTER TABLE apps ADD COLUMN min_instances INTEGER CHECK (min_instances IS NULL OR min_instances BETWEEN 1 AND 40);
ALTER TABLE apps ADD COLUMN max_instances INTEGER CHECK (max_instances IS NULL OR max_instances BETWEEN 1 AND 40);
ALTER TABLE apps ADD COLUMN min_flavor TEXT;
ALTER TABLE apps ADD COLUMN max_flavor TEXT;
ALTER TABLE apps ADD COLUMN autoscaling_json TEXT;
CREATE TABLE scaling_decisions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  at TEXT NOT NULL,
  direction TEXT NOT NULL CHECK (direction IN ('up', 'down')),
  from_instances INTEGER NOT NULL,
  to_instances INTEGER NOT NULL,
  reason TEXT NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('done', 'failed'))
);
CREATE INDEX scaling_decisions_app ON scaling_decisions (app_id, id);
`;
