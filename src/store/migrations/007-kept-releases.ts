/** Each successful deployment remembers how to start its release, so it can be rolled back to. */
export const sql = `
ALTER TABLE deployments ADD COLUMN release_json TEXT;
`;
