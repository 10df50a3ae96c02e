/** The flavour (memory, processes, CPU share) of each application's instances and builds. */
export const sql = `
ALTER TABLE apps ADD COLUMN flavor TEXT NOT NULL DEFAULT 'nano';
ALTER TABLE apps ADD COLUMN build_flavor TEXT NOT NULL DEFAULT 'S';
`;
