/**
 * The flavour (memory, processes, CPU share) of each application's instances and builds.
 * The defaults are src/core/flavors.ts's DEFAULT_INSTANCE_FLAVOR and DEFAULT_BUILD_FLAVOR, written
 * out because a migration never changes once shipped (a unit test keeps the two in step; a new
 * default needs a new migration).
 */
export const sql = `
ALTER TABLE apps ADD COLUMN flavor TEXT NOT NULL DEFAULT 'nano';
ALTER TABLE apps ADD COLUMN build_flavor TEXT NOT NULL DEFAULT 'S';
`;
