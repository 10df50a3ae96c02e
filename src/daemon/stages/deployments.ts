import type { DiskReserve } from '../../storage/disk-reserve.js';
import { Deployer } from '../../pipeline/deployer.js';
import { machineNetworkEnv } from '../../pipeline/machine-network-env.js';
import type { LogHub } from '../../logs/log-hub.js';
import type { Quotas } from '../../quotas/quotas.js';
import type { NpmVersionCatalog } from '../../toolchains/catalog.js';
import type { Store } from '../../store/store.js';
import type { DaemonBase, EdgeBuilt, SandboxesBuilt } from './stage.js';
import type { serving } from './serving.js';

/**
 * The deployer: the queue of each app's deployments, their builds and their releases. Needs:
 * `store`, `logs`, `reserve`, `quotas`, `catalog`, the sandboxes' `sandboxes`, `backend`
 * and `disks`, the serving stage's `runtime`, `repos`, `appEnv`, `policy` and `providers`, the
 * edge's `traffic`. Provides: `deployer`.
 */
export async function deployments(
  needs: DaemonBase &
    Pick<SandboxesBuilt, 'sandboxes' | 'backend' | 'disks'> &
    Pick<ReturnType<typeof serving>, 'runtime' | 'repos' | 'appEnv' | 'policy' | 'providers'> &
    Pick<EdgeBuilt, 'traffic'> & {
      store: Store;
      logs: LogHub;
      reserve: DiskReserve;
      quotas: Quotas;
      catalog: NpmVersionCatalog;
    },
) {
  const { options, store, logs, reserve, quotas, catalog, sandboxes, backend, disks, traffic, stoppers, lifecycle, log } = needs;
  const { runtime, repos, appEnv, policy, providers } = needs;
  const deployer = new Deployer({
    reserve,
    onStarted: (app, deployment) => lifecycle.publish('deployment started', { app, deployment }),
    store,
    repos,
    runtime,
    logs,
    providers,
    catalog,
    dataDir: options.dataDir,
    toolchainCacheDir: options.toolchainCacheDir,
    sandboxes: policy,
    sandboxHost: sandboxes,
    buildNetworks: backend,
    gatewayAddress: backend.gatewayAddress,
    trustedProxies: options.trustedProxies,
    appEnv,
    machineEnv: await machineNetworkEnv(options.toolchainCacheDir),
    keptReleases: options.keptReleases,
    checkCronJobs: (app, jobs) => quotas.checkCronJobs(quotas.org(app.org_id), app, jobs),
    log,
    onBuildFinished: (outcome, seconds) => traffic.metrics.buildFinished(outcome, seconds),
    disks,
  });
  stoppers.control('deployments', () => deployer.cancelAll('The daemon stopped while this deployment was running.'));
  return { deployer };
}
