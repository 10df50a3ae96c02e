import type { AddonManager } from '../../addons/addon-manager.js';
import { FS_BUCKET } from '../../addons/fs-bucket/fs-bucket-provider.js';
import { watchDatabaseSizes } from '../../addons/database-size-watch.js';
import type { AddonProvider } from '../../addons/provider.js';
import type { Store } from '../../store/store.js';
import type { TrafficRecorder } from '../../traffic/traffic-recorder.js';
import { addonSizeCheckMs } from '../addon-options.js';
import type { DaemonBase } from './stage.js';

/**
 * What is watched of the add-on servers: each PostgreSQL database held to its plan's size
 * (docs/disk-budgets.md, Add-ons), and a server that died and was restarted, counted and told
 * to the apps it serves. Needs: `store`, `addons`, `addonProviders`, `traffic`, `tellApps`.
 * Provides nothing.
 */
export function addonWatch(
  needs: DaemonBase & {
    store: Store;
    addons: AddonManager;
    addonProviders: Map<string, AddonProvider>;
    traffic: TrafficRecorder;
    tellApps(appIds: Iterable<string>, line: string): void;
  },
) {
  const { store, addons, addonProviders, traffic, tellApps, stoppers, log } = needs;
  // FS buckets run no server: no restart count to show for them.
  for (const { name } of addons.providerList()) if (name !== FS_BUCKET) traffic.metrics.addonProviderWatched(name);
  const sizeWatch = watchDatabaseSizes({
    store,
    provider: addonProviders.get('postgresql'),
    intervalMs: addonSizeCheckMs(process.env),
    log,
    tellApps,
  });
  stoppers.control('add-on size checks', () => sizeWatch.stop());
  addons.onServerRestart((restart) => {
    traffic.metrics.addonServerRestarted(restart.provider);
    tellApps(restart.appIds, `The ${restart.provider} add-on server this app uses stopped (${restart.previousExit}) and was restarted.`);
  });
  return {};
}
