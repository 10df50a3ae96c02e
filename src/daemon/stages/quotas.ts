import type { DrainService } from '../../drains/drain-service.js';
import { Quotas } from '../../quotas/quotas.js';
import type { Store } from '../../store/store.js';
import { cronJobsOfServingRelease } from './cron.js';
import type { DaemonBase } from './stage.js';

/**
 * Each organisation's quotas (`--default-quota`, `--orgs-per-user`). Needs: `store`, `drains`
 * (the buffer each drain reserves). Provides: `quotas`.
 */
export function quotas({ options, store, drains }: DaemonBase & { store: Store; drains: DrainService }) {
  return {
    quotas: new Quotas(store, options.defaultQuotas, {
      orgsPerUser: options.orgsPerUser,
      drainBufferBytes: drains.bufferBytes,
      cronJobsOfApp: (appId) => cronJobsOfServingRelease(store, appId),
    }),
  };
}
