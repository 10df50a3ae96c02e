import { appDiskUse } from '../../api/disk-use.js';
import type { DiskReserve } from '../../storage/disk-reserve.js';
import type { Store } from '../../store/store.js';
import { endpointsOf } from './endpoints.js';
import type { DaemonBase, EdgeBuilt, SandboxesBuilt } from './stage.js';

/**
 * The disks in the metrics: the free-space reserve and each app's use of its budget. Needs:
 * `store`, `reserve`, the sandboxes' `appDiskBudget` and `disks`, the edge's `traffic`.
 * Provides nothing.
 */
export function diskMetrics(
  needs: DaemonBase & Pick<SandboxesBuilt, 'appDiskBudget' | 'disks'> & Pick<EdgeBuilt, 'traffic'> & { store: Store; reserve: DiskReserve },
) {
  const { options, store, reserve, appDiskBudget, disks, traffic } = needs;
  traffic.metrics.watchDiskReserve(reserve);
  traffic.metrics.watchAppDisks(async () =>
    (await appDiskUse({ store, defaultDiskBudget: appDiskBudget, endpoints: endpointsOf(options), services: undefined }, disks)).map(
      (v) => ({
        app: v.app_id,
        usedBytes: v.used_bytes,
        budgetBytes: v.budget_bytes,
      }),
    ),
  );
  return {};
}
