/** The autoscaler's changes of flavour (vertical): the flavour before and after; null for a change of count. */
export const sql = `
ALTER TABLE scaling_decisions ADD COLUMN from_flavor TEXT;
ALTER TABLE scaling_decisions ADD COLUMN to_flavor TEXT;
`;
