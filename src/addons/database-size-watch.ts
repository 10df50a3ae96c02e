import type { Store } from '../store/store.js';
import { PostgresqlProvider } from './postgresql/postgresql-provider.js';
import type { AddonProvider } from './provider.js';

const MiB = 1024 * 1024;

/**
 * Every minute (SLIPWAY_ADDON_SIZE_CHECK_SECONDS), each PostgreSQL add-on's database is held
 * to its plan's size (postgresql/database-sizes.ts). A change is told to the daemon's output and
 * to the apps linked to the add-on, in their logs.
 */
export function watchDatabaseSizes(o: {
  store: Store;
  provider: AddonProvider | undefined;
  intervalMs: number;
  log(line: string): void;
  tellApps(appIds: string[], line: string): void;
}): { stop(): void } {
  const provider = o.provider instanceof PostgresqlProvider ? o.provider : undefined;
  if (!provider) return { stop: () => undefined };
  let running = false;
  const check = async () => {
    if (running) return;
    running = true;
    try {
      const addons = o.store.addons.all().filter((a) => a.provider === 'postgresql');
      const byDatabase = new Map<string, (typeof addons)[number]>();
      for (const addon of addons) {
        const database = o.store.addons.config(addon).database;
        if (database) byDatabase.set(database, addon);
      }
      const sizes = await provider.checkDatabaseSizes([...byDatabase.keys()]);
      const limit = `${Math.round(provider.databaseSizeLimit / MiB)} MiB`;
      for (const size of sizes) {
        const addon = byDatabase.get(size.database);
        if (!addon || !size.change) continue;
        const used = `${Math.round(size.sizeBytes / MiB)} MiB`;
        const line =
          size.change === 'made-read-only'
            ? `The PostgreSQL add-on ${addon.name} holds ${used}, more than its plan's ${limit}: it is read-only until it is below (delete rows, then VACUUM FULL; its sessions were ended).`
            : `The PostgreSQL add-on ${addon.name} is back under its plan's ${limit} (${used}): it takes writes again.`;
        o.log(line);
        o.tellApps(o.store.links.appsOfAddon(addon.id), line);
      }
    } catch (error) {
      o.log(`Could not check the PostgreSQL add-ons' sizes: ${(error as Error).message}`);
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void check(), o.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
