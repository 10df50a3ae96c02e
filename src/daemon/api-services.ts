import type { AddonManager } from '../addons/addon-manager.js';
import type { DeploymentServices } from '../api/platform.js';
import type { PlatformBackupReport } from '../backups/platform/platform-backup.js';
import type { DomainService } from '../domains/domain-service.js';
import { type OneOffDeps, startOneOff } from '../serving/one-off.js';
import type { VersionCatalog } from '../providers/plan.js';
import type { Router } from '../router/router.js';
import { type AppDeletionDeps, deleteApp } from './app-deletion.js';
import type { LogHub } from '../logs/log-hub.js';
import type { RepoStore } from '../receiver/repo-store.js';
import type { AppRuntime } from '../serving/app-runtime.js';
import type { AppDisks } from '../storage/app-disks.js';
import { oneOffLog } from './one-off-log.js';

/**
 * What the API may ask of the running platform beyond the store: deploy, remove an app, run a
 * one-off command, back the platform up, stop it all. Each of these spans several rooms (an
 * app's deletion reaches every room that owns something of it: those rooms subscribe to its
 * steps on the lifecycle hub), so the daemon, which holds every room, puts them together here.
 */
export function apiServices(input: {
  deletion: AppDeletionDeps;
  runtime: AppRuntime;
  logs: LogHub;
  repos: RepoStore;
  disks: AppDisks;
  oneOffs: OneOffDeps;
  catalog: VersionCatalog;
  domains: DomainService;
  addons: AddonManager;
  router: Router;
  backupPlatform(to: string | undefined): Promise<PlatformBackupReport>;
  rotateSecretsKey(): Promise<{ keyFile: string; oldKeyId: string; newKeyId: string; resealed: number }>;
  /** Called once `system stop` has answered: the daemon then stops the rest and exits. */
  systemStopped(): void;
  log(line: string): void;
}): DeploymentServices {
  const { deletion, runtime, logs, oneOffs, addons, router, log } = input;
  const { store, deployer } = deletion;
  return {
    deployer,
    runtime,
    logs,
    repos: input.repos,
    catalog: input.catalog,
    disks: input.disks,
    // Each room that owns something of the app ends and removes it itself, told by the lifecycle hub.
    removeApp: (app) => deleteApp(deletion, app),
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
