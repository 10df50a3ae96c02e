import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chmodSync, mkdirSync } from 'node:fs';
import { Quotas } from '../quotas/quotas.js';
import { Store } from '../store/store.js';
import { createApiServer } from '../api/server.js';
import { backupStoreOptions, startBackups } from './backups-setup.js';
import { openBackupStore } from '../backups/store/open-store.js';
import { keptReleaseFolders } from '../pipeline/kept-release.js';
import { diskReserveOf } from './disk-reserve-setup.js';
import { takePlatformBackup } from '../backups/platform/platform-backup.js';
import type { RestoredPlatform } from '../backups/platform/platform-restore.js';
import { oneBackupAtATime, platformBackupPlaces, schedulePlatformBackups } from './platform-backup-setup.js';
import { slipwayVersion } from '../cli/version.js';
import { consoleHandler } from '../console/serve.js';
import type { DaemonOptions } from './options.js';
import { acquireDaemonLock, ensureDataDir } from './data-dir.js';
import { acquireSubnetLock } from './subnet-lock.js';
import { bootstrapIfEmpty } from './bootstrap.js';
import { startSecrets } from './secrets-setup.js';
import { flavorLimits, makeSandboxPolicy } from './sandbox-policy.js';
import { buildLimits, DEFAULT_BUILD_FLAVOR, DEFAULT_INSTANCE_FLAVOR, flavorNamed } from '../core/flavors.js';
import { lockDownDataFolder } from './data-folder-modes.js';
import { watchDatabaseSizes } from '../addons/database-size-watch.js';
import { addonSizeCheckMs } from './addon-options.js';
import { appDiskUse } from '../api/disk-use.js';
import { startOneOff } from '../pipeline/one-off.js';
import { OneOffRuns } from '../pipeline/one-off-runs.js';
import { retireSwarmServices } from '../instances/swarm/retire.js';
import { swarmOptions } from '../instances/swarm/start.js';
import { startNetwork } from './network-setup.js';
import { platformEgressGuard } from './guards-setup.js';
import { logReady } from './ready-log.js';
import { startCertificates } from './certificates-setup.js';
import { RepoStore } from '../receiver/repo-store.js';
import { GitSshServer } from '../receiver/ssh-git-server.js';
import { LogHub } from '../logs/log-hub.js';
import { AppRuntime } from '../serving/app-runtime.js';
import { Deployer } from '../pipeline/deployer.js';
import { INTERRUPTED_BY_RESTART, resumeDeployments } from './resume-deployments.js';
import { platformEvents } from './platform-events-setup.js';
import { cronJobsOfServingRelease, makeCronScheduler } from './cron-setup.js';
import { startNotifications } from './notifications-setup.js';
import { DrainService } from '../drains/drain-service.js';
import { NpmVersionCatalog } from '../toolchains/catalog.js';
import { makeReceiverHooks } from './receiver-hooks.js';
import { makeProviders } from '../providers/registry.js';
import { machineNetworkEnv } from '../pipeline/machine-network-env.js';
import { appEnvironment } from '../links/app-environment.js';
import { checkRestoreSource, restoreDataFolder, resumeAfterRestore, unpackRestoredReleases } from './restore-setup.js';
import { startSandboxes } from './sandboxes-setup.js';
import { startEdge } from './edge-setup.js';
import { apiServices } from './api-services.js';
import { closeServer, type StopScope, Stoppers } from './stoppers.js';

export type { StopScope } from './stoppers.js';

/**
 * Starts every room of the platform on one data folder and stops them in reverse order. This
 * file is the order of a start, each room made by one call; what a room needs made around it
 * lives in the `*-setup.ts` files beside it.
 */
export class Daemon {
  private readonly stoppers = new Stoppers();
  private markSystemStopped: () => void = () => undefined;
  /** Resolves once `slipway system stop` has stopped the data plane: the daemon then stops too. */
  readonly systemStopped = new Promise<void>((resolve) => (this.markSystemStopped = resolve));

  constructor(
    private readonly options: DaemonOptions,
    private readonly log: (line: string) => void,
  ) {}

  async start(): Promise<{ apiUrl: string }> {
    const { options, log, stoppers } = this;
    // Checked before anything is created in the data folder: a refusal leaves it as it was.
    const backup = await checkRestoreSource(options);
    ensureDataDir(options.dataDir);
    const lock = acquireDaemonLock(options.dataDir);
    stoppers.control('lock', () => lock.release());
    // Before anything named after the subnet is touched (sandboxes swept, bridge, firewall table).
    const subnetLock = acquireSubnetLock(options.subnet, options.dataDir);
    stoppers.control('subnet', () => subnetLock.release());
    // Registered early so it runs late: the apps' filesystems are unmounted once nothing of them runs.
    const unmounts = { appDisks: async () => undefined, buildSecrets: async () => undefined };
    stoppers.dataPlane(
      'app filesystems',
      () => unmounts.appDisks(),
      () => undefined,
    );
    // Builds end with the daemon, whatever the scope: their credentials' tmpfs goes with them.
    stoppers.control('build credentials', () => unmounts.buildSecrets());
    lockDownDataFolder(options.dataDir);
    const restored: RestoredPlatform | undefined = backup && (await restoreDataFolder(options, backup, log));

    const store = Store.open(join(options.dataDir, 'slipway.db'));
    stoppers.control('store', () => store.close());
    const secrets = startSecrets(store, options.dataDir, log);
    // SQLite creates -wal and -shm with the database's mode: make sure all three are root's alone.
    lockDownDataFolder(options.dataDir);
    const first = bootstrapIfEmpty(store, options.dataDir);
    // What the last daemon left unfinished: the deployment it was running ends CANCELLED (its
    // build sandbox and folder are swept below); those waiting their turn run once the apps serve.
    const unfinished = store.deployments.unfinished();
    const interrupted = unfinished.filter((d) => d.phase !== 'queued');
    for (const d of interrupted) store.deployments.finish(d.id, 'CANCELLED', INTERRUPTED_BY_RESTART);
    if (interrupted.length) log(`Marked ${interrupted.length} deployment(s) interrupted by the restart CANCELLED.`);

    const endpoints = { host: options.publicHost, sshPort: options.sshPort, routerPort: options.routerPort, domain: options.domain };

    const { names, sandboxes, backend, appUsers, layout, appDiskBudget, disks } = await startSandboxes({
      options,
      store,
      stoppers,
      unmounts,
      log,
    });
    // Before any release starts: the kept releases a platform backup carried, in the apps' folders.
    if (restored) await unpackRestoredReleases(restored, { store, layout, appUsers, toolchainCacheDir: options.toolchainCacheDir, log });
    const reserve = diskReserveOf(options);

    const { addonProviders, addons, postgresql, addonAccess, instances, instanceBackend } = await startNetwork({
      options,
      store,
      backend,
      names,
      log,
      onStopDataPlane: (name, stop, detach) => stoppers.dataPlane(name, stop, detach),
    });

    // What people are told about (webhooks, e-mail): deployments, instances, cron runs, drains.
    const told = platformEvents(store);
    const { traffic, acmeChallenges, acmeChallenge, router } = await startEdge({ options, store, stoppers, log });

    mkdirSync(options.toolchainCacheDir, { recursive: true, mode: 0o755 });
    // The build user runs the cached tools: the cache folder must be open to it.
    chmodSync(options.toolchainCacheDir, 0o755);
    const logs = new LogHub(join(options.dataDir, 'logs'), { limits: options.logLimits, warn: log });
    void logs.restrictExistingFiles();
    const egress = platformEgressGuard(options, acmeChallenge.port);
    // Log drains: every app line (and access record, when asked) waits on disk for its receiver.
    const drains = new DrainService({
      store,
      dir: join(options.dataDir, 'drains'),
      bufferBytes: options.drainBufferBytes,
      appLogs: logs,
      accessLogs: traffic.accessLog.hub,
      events: told.events,
      forbidden: egress,
      log,
    });
    drains.start();
    const quotas = new Quotas(store, options.defaultQuotas, {
      orgsPerUser: options.orgsPerUser,
      drainBufferBytes: drains.bufferBytes,
      cronJobsOfApp: (appId) => cronJobsOfServingRelease(store, appId),
    });
    stoppers.control('log drains', () => drains.stop());
    traffic.metrics.watchDrains(() => drains.figures());
    const notifications = await startNotifications({ store, events: told.events, guard: egress, smtp: options.smtp, log });
    stoppers.control('notifications', () => notifications.dispatcher.stop());
    // An add-on server that died and was restarted: counted, and told to the apps it serves.
    for (const { name } of addons.providerList()) traffic.metrics.addonProviderWatched(name);
    // docs/disk-budgets.md, Add-ons: each PostgreSQL database held to its plan's size.
    const sizeWatch = watchDatabaseSizes({
      store,
      provider: addonProviders.get('postgresql'),
      intervalMs: addonSizeCheckMs(process.env),
      log,
      tellApps: (appIds, line) => {
        for (const appId of appIds) logs.append(appId, 'system', line);
      },
    });
    stoppers.control('add-on size checks', () => sizeWatch.stop());
    addons.onServerRestart((restart) => {
      traffic.metrics.addonServerRestarted(restart.provider);
      const line = `The ${restart.provider} add-on server this app uses stopped (${restart.previousExit}) and was restarted.`;
      for (const appId of restart.appIds) logs.append(appId, 'system', line);
    });
    const backupService = await startBackups({
      reserve,
      dataDir: options.dataDir,
      options: options.backups,
      store,
      addons,
      postgresql,
      redis: addonProviders.get('redis'),
      log,
      tellApps: (appIds, line) => {
        for (const appId of appIds) logs.append(appId, 'system', line);
      },
      verified: (provider, result) => traffic.metrics.backupVerified(provider, result),
      bounds: {
        manualBackup: (addon) => quotas.checkNewBackup(quotas.org(addon.org_id)),
        newAddon: (addon) => quotas.checkNewAddon(quotas.org(addon.org_id)),
      },
      egress,
    });
    stoppers.control('backups', () => backupService.stop());
    // The backup store as it keeps bytes: a platform backup there seals its own files.
    const rawBackupStore = await openBackupStore({ ...backupStoreOptions(options.dataDir, options.backups), keyFile: undefined, egress });
    stoppers.control('platform backup store', () => rawBackupStore.close?.());
    const platformPlace = platformBackupPlaces(rawBackupStore, backupStoreOptions(options.dataDir, options.backups).folder);
    const backupPlatform = oneBackupAtATime(async (to, keep) =>
      takePlatformBackup(
        {
          dataDir: options.dataDir,
          store,
          backups: backupService.backups,
          backupStore: backupService.backupStore,
          keptReleases: (appId) => keptReleaseFolders(store, appId),
          version: slipwayVersion(),
          log,
          reserve,
          keyFile: options.backups?.keyFile,
        },
        await platformPlace(to),
        keep,
      ),
    );
    const scheduledPlatformBackups =
      options.platformBackup && schedulePlatformBackups(options.platformBackup, platformPlace, backupPlatform, log);
    if (scheduledPlatformBackups) stoppers.control('platform backups', () => scheduledPlatformBackups.stop());
    for (const { name } of addons.providerList()) traffic.metrics.backupProviderWatched(name);
    const repos = new RepoStore(join(options.dataDir, 'repos'), (appId) => layout.repository(appId));
    // Every variable an app receives: linked apps' exposed config < add-ons' < its own (src/core/merge-env.ts).
    const appEnv = (appId: string) => appEnvironment(store, addons, appId);
    const policy = makeSandboxPolicy({
      appUsers,
      toolchainCacheDir: options.toolchainCacheDir,
      instanceLimits: (app) => flavorLimits(flavorNamed(app.flavor ?? DEFAULT_INSTANCE_FLAVOR)),
      buildLimits: (app) => flavorLimits(buildLimits(flavorNamed(app.build_flavor ?? DEFAULT_BUILD_FLAVOR))),
    });
    const providers = makeProviders();
    const runtime = new AppRuntime({
      ...{
        store,
        backend: instanceBackend,
        sandboxes: policy,
        router,
        logs,
        domain: options.domain,
        gatewayAddress: instanceBackend.gatewayAddress,
        trustedProxies: options.trustedProxies,
        appEnv,
        providers,
        log,
      },
      onInstanceRestart: (appId) => {
        traffic.metrics.instanceRestarted(appId);
        told.instanceCrashed(appId);
      },
    });
    stoppers.dataPlane(
      'instances',
      () => runtime.shutdown(),
      () => runtime.detach(),
    );
    // docs/behaviour.md, Liveness; stopped before the instances are (stoppers run in reverse order).
    runtime.startLivenessMonitor({
      onReplaced: (appId) => {
        traffic.metrics.instanceReplaced(appId);
        told.instanceReplaced(appId);
      },
    });
    stoppers.control('liveness checks', () => runtime.stopLivenessMonitor());
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
    const catalog = new NpmVersionCatalog(join(options.toolchainCacheDir, 'catalog'));
    const deployer = new Deployer({
      reserve,
      onStarted: (app, deployment) => told.deploymentStarted(app, deployment),
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

    const ssh = new GitSshServer({
      host: options.listen,
      port: options.sshPort,
      hostKeyPath: join(options.dataDir, 'ssh_host_ed25519_key'),
      repos,
      hooks: makeReceiverHooks(store, deployer, endpoints, disks, reserve),
      log,
    });
    const { port: sshPort } = await ssh.start();
    egress.addOwnPort(sshPort, 'git server');
    stoppers.control('git over SSH', () => ssh.stop());

    // Every one-off command by app (`slipway run` and cron runs): an app's deletion ends them.
    const oneOffRuns = new OneOffRuns();
    const oneOffs = { store, runtime, sandboxes: policy, sandboxHost: sandboxes, networks: backend, instances, runs: oneOffRuns };
    // docs/behaviour.md, Cron jobs: each app's jobs, once per schedule, in one-off sandboxes of its release.
    const cron = makeCronScheduler({
      store,
      events: told.events,
      appVars: appEnv,
      appLog: (appId, stream, line) => logs.append(appId, stream, line),
      runOneOff: (app, argv, onData) => startOneOff(oneOffs, app, argv, onData),
      log,
    });
    stoppers.control('cron jobs', () => cron.stop());
    traffic.metrics.watchDiskReserve(reserve);
    traffic.metrics.watchAppDisks(async () =>
      (await appDiskUse({ store, defaultDiskBudget: appDiskBudget, endpoints, services: undefined }, disks)).map((v) => ({
        app: v.app_id,
        usedBytes: v.used_bytes,
        budgetBytes: v.budget_bytes,
      })),
    );
    const api = createApiServer(
      {
        store,
        endpoints,
        defaultDiskBudget: appDiskBudget,
        reserve,
        quotas,
        services: apiServices({
          removal: {
            ...{ store, runtime, deployer, repos, appUsers, logs, dataDir: options.dataDir, disks, log },
            ending: { drains, cron, oneOffs: oneOffRuns },
          },
          oneOffs,
          catalog,
          domains: certificates.manager,
          traffic,
          instanceBackend,
          drains,
          addons,
          router,
          backupPlatform,
          rotateSecretsKey: secrets.rotate,
          systemStopped: () => this.markSystemStopped(),
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
    const apiUrl = `http://${host}:${port}`;

    // Add-on servers first: the apps restored next connect to them.
    await addons.resumeAll();
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
    resumeDeployments({ store, logs, deployer, interrupted, waiting: unfinished.filter((d) => d.phase === 'queued'), log });
    cron.start();
    if (restored) resumeAfterRestore(restored, { store, deployer, backups: backupService.backups, log });

    logReady(log, options, { apiUrl, sshPort, caCertificatePath: certificates.caCertificatePath, first });
    return { apiUrl };
  }

  async stop(scope: StopScope = 'all'): Promise<void> {
    await this.stoppers.stopAll(scope, this.log);
  }
}
