import type { Store } from '../store/store.js';
import type { AddonRow } from '../store/addons.js';
import { addonServerOf, type AddonLink, type AddonServer } from './addon-access.js';

/** The add-on servers and links as the store has them now, for AddonAccess. */
export function addonCatalog(
  store: Store,
  addons: { env(row: AddonRow): Record<string, string> },
): () => { servers: AddonServer[]; links: AddonLink[] } {
  return () => {
    const servers: AddonServer[] = [];
    const links: AddonLink[] = [];
    for (const row of store.addons.all()) {
      let env: Record<string, string>;
      try {
        env = addons.env(row);
      } catch {
        continue; // a provider this daemon no longer has: no server of ours to open
      }
      const server = addonServerOf(row, env);
      if (!server) continue; // still being provisioned
      servers.push(server);
      for (const appId of store.links.appsOfAddon(row.id)) links.push({ appId, addonId: row.id });
    }
    return { servers, links };
  };
}
