import type { AddressInfo } from 'node:net';
import { createApiServer } from '../../api/server.js';
import { consoleHandler } from '../../console/serve.js';
import type { DiskReserve } from '../../storage/disk-reserve.js';
import type { DrainService } from '../../drains/drain-service.js';
import type { LogHub } from '../../logs/log-hub.js';
import type { EgressGuard } from '../../network/egress-guard.js';
import type { Deployer } from '../../pipeline/deployer.js';
import type { Quotas } from '../../quotas/quotas.js';
import type { Store } from '../../store/store.js';
import type { NpmVersionCatalog } from '../../toolchains/catalog.js';
import { apiServices } from '../api-services.js';
import type { startSecrets } from './store.js';
import type { startBackups } from '../backups-setup.js';
import { closeServer } from '../stoppers.js';
import type { certificates } from './certificates.js';
import type { cron } from './cron.js';
import { endpointsOf } from './endpoints.js';
import type { notifications } from './notifications.js';
import type { platformBackups } from './platform-backups.js';
import type { serving } from './serving.js';
import type { DaemonBase, EdgeBuilt, NetworkBuilt, SandboxesBuilt } from './stage.js';

/**
 * The HTTP API and the web console, the last to open: every room it calls runs by then.
 * Needs: most of what the stages before built. Provides: `apiUrl`.
 */
export async function api(
  needs: DaemonBase &
    Pick<SandboxesBuilt, 'sandboxes' | 'appUsers' | 'appDiskBudget' | 'disks'> &
    Pick<NetworkBuilt, 'addons' | 'instances'> &
    Pick<EdgeBuilt, 'traffic' | 'router'> &
    Pick<ReturnType<typeof serving>, 'runtime' | 'repos'> &
    Pick<ReturnType<typeof cron>, 'cron' | 'oneOffs'> &
    Awaited<ReturnType<typeof certificates>> &
    Awaited<ReturnType<typeof notifications>> &
    Pick<Awaited<ReturnType<typeof platformBackups>>, 'backupPlatform'> & {
      store: Store;
      secrets: ReturnType<typeof startSecrets>;
      logs: LogHub;
      reserve: DiskReserve;
      quotas: Quotas;
      drains: DrainService;
      egress: EgressGuard;
      deployer: Deployer;
      catalog: NpmVersionCatalog;
      backupService: Awaited<ReturnType<typeof startBackups>>;
    },
) {
  const { options, store, secrets, logs, reserve, quotas, drains, egress, deployer, catalog, backupService, backupPlatform } = needs;
  const { sandboxes, appUsers, appDiskBudget, disks, addons, instances, traffic, router, runtime, repos } = needs;
  const { cron, oneOffs, certificates, notifications, stoppers, lifecycle, log, markSystemStopped } = needs;
  const api = createApiServer(
    {
      store,
      endpoints: endpointsOf(options),
      defaultDiskBudget: appDiskBudget,
      reserve,
      quotas,
      services: apiServices({
        deletion: { store, deployer, appUsers, lifecycle, log },
        runtime,
        logs,
        repos,
        disks,
        oneOffs,
        catalog,
        domains: certificates.manager,
        addons,
        router,
        backupPlatform,
        rotateSecretsKey: secrets.rotate,
        systemStopped: markSystemStopped,
        log,
      }),
      addons,
      backups: backupService.backups,
      traffic,
      cron,
      drains: { service: drains, forbidden: egress },
      notifications: { guard: egress, smtp: notifications.smtp },
    },
    { fallback: consoleHandler() },
  );
  await new Promise<void>((resolve, reject) => {
    api.once('error', reject);
    api.listen(options.apiPort, options.listen, () => resolve());
  });
  stoppers.control('API', () => closeServer(api));
  // Before the API closes (stoppers run in reverse order): a one-off command's session keeps
  // the API open until the command ends, and one-off commands end with the daemon.
  if (instances) stoppers.control('swarm one-off commands', () => instances.endOneOffs());
  // Likewise a `slipway run` in a local sandbox (and a build): killed before the API closes, or
  // its open session would hold the close until the client gave up. Instances are not touched.
  stoppers.control('one-off commands', () => sandboxes.killAll({ keepOutliving: true }));
  const port = (api.address() as AddressInfo).port;
  egress.addOwnPort(port, 'API');
  const host = options.listen.includes(':') ? `[${options.listen}]` : options.listen;
  return { apiUrl: `http://${host}:${port}` };
}
