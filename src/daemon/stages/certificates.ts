import type { EgressGuard } from '../../network/egress-guard.js';
import type { AppRuntime } from '../../serving/app-runtime.js';
import type { Store } from '../../store/store.js';
import { startCertificates } from '../certificates-setup.js';
import type { DaemonBase, EdgeBuilt } from './stage.js';

/**
 * Certificates: the internal CA, ACME when a directory is given, the manager feeding the router
 * and renewing. Needs: `store`, the edge's `router` and `acmeChallenges`, `runtime` (its routes),
 * `egress`. Provides: `certificates` (the manager, the CA's certificate path).
 */
export async function certificates(
  needs: DaemonBase & Pick<EdgeBuilt, 'router' | 'acmeChallenges'> & { store: Store; runtime: AppRuntime; egress: EgressGuard },
) {
  const { options, store, router, acmeChallenges, runtime, egress, stoppers, log } = needs;
  const certificates = await startCertificates({
    options,
    store,
    router,
    challenges: acmeChallenges,
    applyRoutes: () => runtime.applyRoutes(),
    onRoutesApplied: (listener) => runtime.onRoutesApplied(listener),
    egress,
    log,
  });
  stoppers.control('certificates', () => certificates.manager.stop());
  return { certificates };
}
