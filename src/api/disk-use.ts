import type { AppDiskView } from '../shared/api-types.js';
import { DEFAULT_APP_DISK_BUDGET } from '../core/disk-size.js';
import type { ApiDependencies } from './platform.js';

/** Each app's disk use against its budget, read from its filesystem now (`system status`, `/metrics`). */
export async function appDiskUse(deps: ApiDependencies, disks = deps.services?.disks): Promise<AppDiskView[]> {
  const views: AppDiskView[] = [];
  for (const app of deps.store.apps.all()) {
    const use = disks ? await disks.use(app.id).catch(() => null) : null;
    views.push({
      app_id: app.id,
      app_name: app.name,
      used_bytes: use?.usedBytes ?? null,
      budget_bytes: app.disk_budget_bytes ?? deps.defaultDiskBudget ?? DEFAULT_APP_DISK_BUDGET,
    });
  }
  return views;
}
