import type { AddonManager } from '../addons/addon-manager.js';
import type { DeploymentServices } from '../api/platform.js';
import type { PlatformBackupReport } from '../backups/platform/platform-backup.js';
import type { DomainService } from '../domains/domain-service.js';
import type { DrainService } from '../drains/drain-service.js';
import { type AppRemovalDeps, removeApp } from '../pipeline/app-removal.js';
import { type OneOffDeps, startOneOff } from '../pipeline/one-off.js';
import type { VersionCatalog } from '../providers/plan.js';
import type { Router } from '../router/router.js';
import type { TrafficRecorder } from '../traffic/traffic-recorder.js';
import type { startNetwork } from './stages/network.js';
import { oneOffLog } from './one-off-log.js';

/**
 * What the API may ask of the running platform beyond the store: deploy, remove an app, run a
 * one-off command, back the platform up, stop it all. Each of these spans several rooms (an
 * app's removal reaches its router lines, its images and its drains too), so the daemon, which
 * holds every room, puts them together here rather than inline in its start.
 */
export function apiServices(input: {
  removal: Required<AppRemovalDeps>;
  oneOffs: OneOffDeps;
  catalog: VersionCatalog;
  domains: DomainService;
  traffic: TrafficRecorder;
  instanceBackend: Awaited<ReturnType<typeof startNetwork>>['instanceBackend'];
  drains: DrainService;
  addons: AddonManager;
  router: Router;
  backupPlatform(to: string | undefined): Promise<PlatformBackupReport>;
  rotateSecretsKey(): Promise<{ keyFile: string; oldKeyId: string; newKeyId: string; resealed: number }>;
  /** Called once `system stop` has answered: the daemon then stops the rest and exits. */
  systemStopped(): void;
  log(line: string): void;
}): DeploymentServices {
  const { removal, oneOffs, traffic, instanceBackend, drains, addons, router, log } = input;
  const { store, deployer, runtime, logs } = removal;
  return {
    deployer,
    runtime,
    logs,
    repos: removal.repos,
    catalog: input.catalog,
    disks: removal.disks,
    removeApp: async (app) => {
      await removeApp(removal, app);
      await traffic.forgetApp(app.id);
      // The app is gone already: images left behind are pruned at the next start, not an error.
      if ('forgetApp' in instanceBackend)
        await instanceBackend.forgetApp(app.id).catch((e: Error) => log(`could not remove the release images of ${app.id}: ${e.message}`));
      drains.sync();
    },
    // A run's output goes to the app's log too (marked [run]), and so to its drains.
    runOneOff: async (app, argv, onData) => {
      const output = oneOffLog((stream, line) => logs.append(app.id, stream, line), onData);
      const run = await startOneOff(oneOffs, app, argv, output.onData);
      void run.done.finally(() => output.end());
      return run;
    },
    sandboxOf: (app) => oneOffs.sandboxes.instance(app),
    domains: input.domains,
    backupPlatform: async (to) => {
      const report = await input.backupPlatform(to);
      log(`Platform backup written to ${report.path}.`);
      return report;
    },
    rotateSecretsKey: async () => {
      const done = await input.rotateSecretsKey();
      log(
        `Secrets key rotated: ${done.resealed} value(s) sealed again with key ${done.newKeyId} in ${done.keyFile} (was ${done.oldKeyId}).`,
      );
      return done;
    },
    stopSystem: async () => {
      await deployer.cancelAll('slipway was stopped (system stop) during this deployment.');
      const serving = store.apps.all().filter((app) => runtime.instancesOf(app.id).length > 0);
      const instanceCount = serving.reduce((n, app) => n + runtime.instancesOf(app.id).length, 0);
      const addonServers = addons.startedProviders();
      await runtime.shutdown();
      await router.stop();
      await addons.stop();
      log(`System stop: stopped ${instanceCount} instance(s) of ${serving.length} app(s), the add-on servers and the router.`);
      // The answer leaves first; then the daemon stops the rest and exits.
      setImmediate(() => input.systemStopped());
      return {
        apps: serving.map((app) => app.name),
        instances: instanceCount,
        addon_servers: addonServers,
        router: 'drained and stopped',
      };
    },
  };
}
