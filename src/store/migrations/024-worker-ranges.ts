/**
 * Workers with a range of their own (`slipway scale --min-workers 1 --max-workers 3`): the app's
 * workers then run in worker instances of their own rather than beside each web instance
 * (src/serving/worker-pool.ts). `worker_instances` is the count the autoscaler moves inside
 * `min_workers`..`max_workers`; all three null: no range, the workers run beside each instance as
 * before. A decision of the autoscaler says which count it changed (`target`).
 */
export const sql = `
ALTER TABLE apps ADD COLUMN min_workers INTEGER CHECK (min_workers IS NULL OR min_workers BETWEEN 1 AND 40);
ALTER TABLE apps ADD COLUMN max_workers INTEGER CHECK (max_workers IS NULL OR max_workers BETWEEN 1 AND 40);
ALTER TABLE apps ADD COLUMN worker_instances INTEGER CHECK (worker_instances IS NULL OR worker_instances BETWEEN 1 AND 40);
ALTER TABLE scaling_decisions ADD COLUMN target TEXT NOT NULL DEFAULT 'instances' CHECK (target IN ('instances', 'workers'));
`;
