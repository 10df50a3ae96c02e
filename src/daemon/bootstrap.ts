import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Store } from '../store/store.js';

export const ADMIN_USER = 'admin';
export const DEFAULT_ORG = 'default';

/**
 * First start: an administrator, a default organisation and an API token written to
 * `<data-dir>/admin-token` (0600), never printed. Later starts change nothing.
 */
export function bootstrapIfEmpty(store: Store, dataDir: string): { created: boolean; tokenFile: string } {
  const tokenFile = join(dataDir, 'admin-token');
  if (store.users.count() > 0) return { created: false, tokenFile };
  const token = store.transaction(() => {
    const admin = store.users.create(ADMIN_USER, true);
    const org = store.orgs.create(DEFAULT_ORG);
    store.orgs.addMember(org.id, admin.id, 'owner');
    return store.users.issueToken(admin.id, 'admin token');
  });
  writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  // The token is not returned: nothing may print it (see ready-log.ts).
  return { created: true, tokenFile };
}

export function hasAdminTokenFile(dataDir: string): boolean {
  return existsSync(join(dataDir, 'admin-token'));
}
