import type { RestoredPlatform } from '../../backups/platform/platform-restore.js';
import { retireSwarmServices } from '../../instances/swarm/retire.js';
import { swarmOptions } from '../../instances/swarm/start.js';
import type { LogHub } from '../../logs/log-hub.js';
import type { Deployer } from '../../pipeline/deployer.js';
import type { AppRuntime } from '../../serving/app-runtime.js';
import type { Deployment } from '../../store/deployments.js';
import type { Store } from '../../store/store.js';
import type { startBackups } from '../backups-setup.js';
import { resumeAfterRestore } from '../restore-setup.js';
import { resumeDeployments } from '../resume-deployments.js';
import { restartBucketApps } from '../bucket-restarts.js';
import { type HoldingRouter, moveSharedAddons } from '../shared-addons-move.js';
import type { cron } from './cron.js';
import type { platformBackups } from './platform-backups.js';
import type { DaemonBase, NetworkBuilt, SandboxesBuilt } from './stage.js';

/**
 * Once everything is built and the API listens, the platform serves again, in this order: the
 * add-on servers (the apps restored next connect to them), the backups' schedules, the apps'
 * instances, what an earlier start on the other backend left, the add-ons' client rules, the
 * deployments the last daemon left, cron, and what a restore brought. Provides nothing.
 */
export async function resume(
  needs: DaemonBase &
    Pick<SandboxesBuilt, 'names' | 'backend'> &
    Pick<NetworkBuilt, 'addons' | 'addonAccess' | 'instances' | 'postgresql'> &
    Pick<ReturnType<typeof cron>, 'cron'> &
    Pick<Awaited<ReturnType<typeof platformBackups>>, 'scheduledPlatformBackups'> & {
      store: Store;
      logs: LogHub;
      runtime: AppRuntime;
      deployer: Deployer;
      backupService: Awaited<ReturnType<typeof startBackups>>;
      interrupted: Deployment[];
      waiting: Deployment[];
      restored: RestoredPlatform | undefined;
      tellApps(appIds: Iterable<string>, line: string): void;
      router: HoldingRouter;
    },
) {
  const { options, store, logs, runtime, deployer, backupService, interrupted, waiting, restored, log } = needs;
  const { names, backend, addons, addonAccess, instances, cron, scheduledPlatformBackups, postgresql, tellApps, router } = needs;
  // Add-on servers first: the apps restored next connect to them.
  await addons.resumeAll();
  backupService.restartBucketAppsWith((addonId) => restartBucketApps(addonId, { store, deployer, log }));
  backupService.begin();
  scheduledPlatformBackups?.begin();
  await runtime.restoreAll();
  // Started on Swarm after a start on this machine's sandboxes: those instances served until
  // the tasks took over, and stop now.
  if (instances)
    void backend
      .adoptAll(() => undefined)
      .catch((error: Error) => log(`Stopping the local instances of an earlier start: ${error.message}`));
  // Started on this machine's sandboxes after a start on Swarm: the tasks served until the
  // sandboxes took over (restoreAll switched the router), and their services go now.
  else
    void retireSwarmServices(swarmOptions(options.swarm), names.cgroupRoot, addonAccess, log, backend.gatewayAddress).catch(
      (error: Error) => log(`Removing the swarm services of an earlier start: ${error.message}`),
    );
  // Every sandbox that outlived the last daemon is known again: PostgreSQL's client rules,
  // kept as that daemon left them until now, follow the sandboxes alive.
  await addonAccess.linksChanged();
  resumeDeployments({ store, logs, deployer, interrupted, waiting, log });
  cron.start();
  if (restored) resumeAfterRestore(restored, { store, deployer, backups: backupService.backups, log });
  // Add-ons of the shared cluster of earlier versions move to servers of their own, the apps serving.
  const backUp = async (addonId: string) => {
    const addon = store.addons.byId(addonId);
    if (addon) await backupService.backups.backupNow(addon, 'scheduled');
  };
  void moveSharedAddons({ store, postgresql, deployer, addonAccess, router, backUp, log, tellApps }).catch((error: Error) =>
    log(`Moving the PostgreSQL add-ons to servers of their own: ${error.message}`),
  );
  return {};
}
