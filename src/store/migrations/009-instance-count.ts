/** How many instances serve each application. */
export const sql = `
ALTER TABLE apps ADD COLUMN instances INTEGER NOT NULL DEFAULT 1 CHECK (instances BETWEEN 1 AND 40);
`;
