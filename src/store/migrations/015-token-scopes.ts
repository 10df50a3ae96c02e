/** What each API token may do (read, deploy, full); the tokens made before could do everything. */
export const sql = `
ALTER TABLE api_tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'full' CHECK (scope IN ('read', 'deploy', 'full'));
`;
