import type { AddonManager } from '../../addons/addon-manager.js';
import { FS_BUCKET } from '../../addons/fs-bucket/fs-bucket-provider.js';
import type { AddonProvider } from '../../addons/provider.js';
import type { DiskReserve } from '../../storage/disk-reserve.js';
import type { EgressGuard } from '../../network/egress-guard.js';
import type { Quotas } from '../../quotas/quotas.js';
import type { Store } from '../../store/store.js';
import type { TrafficRecorder } from '../../traffic/traffic-recorder.js';
import { startBackups } from '../backups-setup.js';
import type { DaemonBase } from './stage.js';

/**
 * Add-on backups: where they go, their schedule (begun by the resume stage, once the add-on
 * servers run), their verifications. Needs: `store`, `addons`, `addonProviders`, `reserve`,
 * `quotas`, `traffic`, `egress`, `tellApps`. Provides: `backupService`.
 */
export async function backups(
  needs: DaemonBase & {
    store: Store;
    addons: AddonManager;
    addonProviders: Map<string, AddonProvider>;
    postgresql: AddonProvider | undefined;
    reserve: DiskReserve;
    quotas: Quotas;
    traffic: TrafficRecorder;
    egress: EgressGuard;
    tellApps(appIds: Iterable<string>, line: string): void;
  },
) {
  const { options, store, addons, addonProviders, postgresql, reserve, quotas, traffic, egress, tellApps, stoppers, log } = needs;
  const backupService = await startBackups({
    reserve,
    dataDir: options.dataDir,
    options: options.backups,
    store,
    addons,
    postgresql,
    redis: addonProviders.get('redis'),
    fsBuckets: addonProviders.get(FS_BUCKET),
    log,
    tellApps,
    verified: (provider, result) => traffic.metrics.backupVerified(provider, result),
    bounds: {
      manualBackup: (addon) => quotas.checkNewBackup(quotas.org(addon.org_id)),
      newAddon: (addon) => quotas.checkNewAddon(quotas.org(addon.org_id)),
    },
    egress,
  });
  stoppers.control('backups', () => backupService.stop());
  for (const { name } of addons.providerList()) traffic.metrics.backupProviderWatched(name);
  return { backupService };
}
