import { Quotas } from '../quotas/quotas.js';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chmodSync, mkdirSync } from 'node:fs';
import { Store } from '../store/store.js';
import { createApiServer } from '../api/server.js';
import { backupStoreOptions, startBackups } from './backups-setup.js';
import { diskReserveOf } from './disk-reserve-setup.js';
import { takePlatformBackup } from '../backups/platform/platform-backup.js';
import {
  assertEmptyDataFolder,
  checkPlatformBackup,
  restorePlatform,
  type CheckedBackup,
  type RestoredPlatform,
} from '../backups/platform/platform-restore.js';
import { schedulePlatformBackups } from './platform-backup-setup.js';
import { slipwayVersion } from '../cli/version.js';
import { consoleHandler } from '../console/serve.js';
import type { DaemonOptions } from './options.js';
import { networkNames } from './options.js';
import { acquireDaemonLock, ensureDataDir } from './data-dir.js';
import { acquireSubnetLock } from './subnet-lock.js';
import { bootstrapIfEmpty } from './bootstrap.js';
import { AppUsers, parseUidRange } from '../sandbox/app-users.js';
import { SandboxHost } from '../sandbox/sandbox-host.js';
import { flavorLimits, makeSandboxPolicy } from './sandbox-policy.js';
import { buildLimits, DEFAULT_BUILD_FLAVOR, DEFAULT_INSTANCE_FLAVOR, flavorNamed } from '../core/flavors.js';
import { lockDownDataFolder } from './data-folder-modes.js';
import { moveIntoAppFolders, migrateAppFolders } from './migrate-app-folders.js';
import { removeApp } from '../pipeline/app-removal.js';
import { AppDisks } from '../pipeline/app-disks.js';
import { watchDatabaseSizes } from '../addons/database-size-watch.js';
import { addonSizeCheckMs } from './addon-options.js';
import { appDiskUse } from '../api/disk-use.js';
import { DeployLayout } from '../pipeline/deploy-layout.js';
import { DEFAULT_APP_DISK_BUDGET } from '../core/disk-size.js';
import { startOneOff } from '../pipeline/one-off.js';
import { deleteFirewallTable } from '../network/firewall.js';
import { BuildSecretsMount } from '../pipeline/build-secrets-mount.js';
import { retireSwarmServices } from '../instances/swarm/retire.js';
import { swarmOptions } from '../instances/swarm/start.js';
import { startNetwork } from './network-setup.js';
import { platformGuards } from './guards-setup.js';
import { logReady } from './ready-log.js';
import { rmSync } from 'node:fs';
import { LocalNetnsBackend } from '../instances/local/local-netns-backend.js';
import { HaproxyRouter } from '../router/haproxy/haproxy-router.js';
import type { Router, RouterOptions } from '../router/router.js';
import { startMetricsServer } from '../metrics/metrics-server.js';
import { makeTrafficRecorder } from './traffic-setup.js';
import { AcmeChallengeResponder } from '../certificates/acme-challenge-responder.js';
import { startCertificates } from './certificates-setup.js';
import { RepoStore } from '../receiver/repo-store.js';
import { GitSshServer } from '../receiver/ssh-git-server.js';
import { LogHub } from '../logs/log-hub.js';
import { AppRuntime } from '../serving/app-runtime.js';
import { Deployer } from '../pipeline/deployer.js';
import { INTERRUPTED_BY_RESTART, resumeDeployments } from './resume-deployments.js';
import { platformEvents } from './platform-events-setup.js';
import { makeCronScheduler } from './cron-setup.js';
import { startNotifications } from './notifications-setup.js';
import { DrainService } from '../drains/drain-service.js';
import { oneOffLog } from './one-off-log.js';
import { placeDataPlaneIn } from '../executor/data-plane-cgroup.js';
import { NpmVersionCatalog } from '../toolchains/catalog.js';
import { makeReceiverHooks } from './receiver-hooks.js';
import { makeProviders } from '../providers/registry.js';
import { machineNetworkEnv } from '../pipeline/machine-network-env.js';
import { appEnvironment } from '../links/app-environment.js';

/**
 * How far a stop goes. `control`: the daemon alone (SIGTERM, SIGINT, an upgrade); the router,
 * the instances, their workers and the add-on servers go on serving and the next daemon adopts
 * them. `all`: `slipway system stop`, which drains and stops the data plane too.
 */
export type StopScope = 'control' | 'all';

type Stopper = () => Promise<void> | void;

/** Starts every room of the platform on one data folder and stops them in reverse order. */
export class Daemon {
  private readonly stoppers: Array<{ name: string; stop: Stopper; detach: Stopper }> = [];
  private markSystemStopped: () => void = () => undefined;
  /** Resolves once `slipway system stop` has stopped the data plane: the daemon then stops too. */
  readonly systemStopped = new Promise<void>((resolve) => (this.markSystemStopped = resolve));

  constructor(
    private readonly options: DaemonOptions,
    private readonly log: (line: string) => void,
  ) {}

  /** A part of the control plane: stopped whatever the scope. */
  private onStop(name: string, stop: Stopper): void {
    this.stoppers.push({ name, stop, detach: stop });
  }

  /**
   * A part of the data plane: `stop` ends it (`system stop`), `detach` lets the daemon go while
   * it goes on serving (what the daemon holds of it is released, nothing of it is stopped).
   */
  private onStopDataPlane(name: string, stop: Stopper, detach: Stopper): void {
    this.stoppers.push({ name, stop, detach });
  }

  async start(): Promise<{ apiUrl: string }> {
    const { options, log } = this;
    // Both checked before anything is created in the data folder: a refusal leaves it as it was.
    let backup: CheckedBackup | undefined;
    if (options.restoreFrom) {
      await assertEmptyDataFolder(options.dataDir);
      backup = await checkPlatformBackup(options.restoreFrom).catch((error: Error) => {
        throw new Error(`Cannot restore from ${options.restoreFrom}: ${error.message} Nothing was written to ${options.dataDir}.`);
      });
    }
    ensureDataDir(options.dataDir);
    const lock = acquireDaemonLock(options.dataDir);
    this.onStop('lock', () => lock.release());
    // Before anything named after the subnet is touched (sandboxes swept, bridge, firewall table).
    const subnetLock = acquireSubnetLock(options.subnet, options.dataDir);
    this.onStop('subnet', () => subnetLock.release());
    // Registered early so it runs late: the apps' filesystems are unmounted once nothing of them runs.
    let unmountAppDisks: () => Promise<void> = async () => undefined;
    let unmountBuildSecrets: () => Promise<void> = async () => undefined;
    this.onStopDataPlane(
      'app filesystems',
      async () => {
        await unmountBuildSecrets();
        await unmountAppDisks();
      },
      () => undefined,
    );
    lockDownDataFolder(options.dataDir);
    let restored: RestoredPlatform | undefined;
    if (backup) {
      try {
        restored = await restorePlatform({
          backup,
          dataDir: options.dataDir,
          backupStore: backupStoreOptions(options.dataDir, options.backups),
          log,
        });
      } catch (error) {
        throw new Error(
          `The restore from ${options.restoreFrom} stopped: ${(error as Error).message} ` +
            `The data folder ${options.dataDir} holds part of it: empty it before trying again.`,
        );
      }
    }

    const store = Store.open(join(options.dataDir, 'slipway.db'));
    this.onStop('store', () => store.close());
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

    const names = networkNames(options.subnet);
    const sandboxes = new SandboxHost({
      bundlesDir: join(options.dataDir, 'sandboxes'),
      stateDir: join(options.dataDir, 'runc'),
      cgroupRoot: names.cgroupRoot,
      layersFolder: (appId) => new DeployLayout(options.dataDir).sandboxLayersFolder(appId),
    });
    // What outlives the daemon lives in a control group of its own, apart from the daemon's unit.
    placeDataPlaneIn(sandboxes.cgroups.dataPlaneGroup());
    // Builds and one-off commands end with the daemon; instances and their workers outlive it.
    this.onStopDataPlane(
      'sandboxes',
      async () => {
        await sandboxes.killAll();
        sandboxes.cgroups.removeRoot();
      },
      () => sandboxes.killAll(),
    );
    const backend = new LocalNetnsBackend({
      bridgeName: names.bridgeName,
      namespacePrefix: names.namespacePrefix,
      subnet: options.subnet,
      sandboxes,
      recordsDir: join(options.dataDir, 'instances'),
      // The bridge of an earlier start on another --subnet, once its last instance moved here.
      onBridgeRetired: (bridge) => deleteFirewallTable(bridge),
    });
    // An earlier daemon's builds and one-off commands are killed with their cgroups and their
    // build folders wiped (with the build credentials beside them); its instances are adopted.
    const swept = await sandboxes.sweep(backend.sandboxesToKeep());
    if (swept.length) log(`Stopped ${swept.length} build or one-off sandbox(es) left running by a previous daemon.`);
    rmSync(join(options.dataDir, 'builds'), { recursive: true, force: true });
    lockDownDataFolder(options.dataDir);
    const appUsers = new AppUsers(store, parseUidRange(options.appUids));
    // Each app's filesystem, at its budget: mounted unless an earlier daemon left it mounted.
    const layout = new DeployLayout(options.dataDir);
    const appDiskBudget = options.appDiskBudget ?? DEFAULT_APP_DISK_BUDGET;
    const reserve = diskReserveOf(options);
    const disks = new AppDisks({ layout, budgetOf: (appId) => store.apps.byId(appId)?.disk_budget_bytes ?? appDiskBudget, log });
    await disks.ensureAll(store.apps.all().map((app) => app.id));
    unmountAppDisks = () => disks.unmountAll();
    await moveIntoAppFolders(store, layout, disks, log);
    await migrateAppFolders(store, appUsers, layout, log);
    const buildSecrets = new BuildSecretsMount(layout.buildSecretsRoot());
    await buildSecrets.ensure();
    unmountBuildSecrets = () => buildSecrets.unmount();
    for (const app of store.apps.all()) {
      rmSync(layout.buildFolder(app.id), { recursive: true, force: true });
      rmSync(layout.scratchesFolder(app.id), { recursive: true, force: true });
      sandboxes.sweepLayers(app.id);
    }

    const { addonProviders, addons, postgresql, addonAccess, instances, instanceBackend } = await startNetwork({
      options,
      store,
      backend,
      names,
      log,
      onStopDataPlane: (name, stop, detach) => this.onStopDataPlane(name, stop, detach),
    });

    // What the edge sees: the router reports each request here (access logs, charts, metrics).
    // What people are told about (webhooks, e-mail): deployments, instances, cron runs, drains.
    const told = platformEvents(store);
    const traffic = makeTrafficRecorder({
      dataDir: options.dataDir,
      store,
      log,
      activeConnections: async () => (router as Router).activeConnections?.(),
      appConnections: async () => (router as Router).appConnections?.(),
      droppedAccessRecords: async () => (router as Router).droppedAccessRecords?.(),
    });
    // ACME HTTP-01 challenges arrive at the router for any host; it passes them to this responder.
    const acmeChallenges = new AcmeChallengeResponder();
    const acmeChallenge = await acmeChallenges.start();
    this.onStop('ACME challenge responder', () => acmeChallenges.stop());
    const routerOptions: RouterOptions = {
      listenHost: options.listen,
      port: options.routerPort,
      httpsPort: options.httpsPort,
      trustedProxies: options.trustedProxies,
      workDir: join(options.dataDir, 'router'),
      acmeChallenge,
      onRequest: traffic.onRequest,
    };
    // An adopted router's deaths while no daemon ran are told (and counted) by its start().
    const router = new HaproxyRouter({ ...routerOptions, log, onEngineRestart: () => traffic.metrics.routerRestarted() });
    await router.start();
    this.onStopDataPlane(
      'router',
      () => router.stop(),
      () => router.detach(),
    );
    if (options.metricsListen) {
      const metricsServer = await startMetricsServer(traffic.metrics, options.metricsListen.host, options.metricsListen.port);
      this.onStop('metrics', () => closeServer(metricsServer.server));
      log(`Prometheus metrics on ${metricsServer.url} (no token: keep this address to the monitoring network)`);
    }

    mkdirSync(options.toolchainCacheDir, { recursive: true, mode: 0o755 });
    // The build user runs the cached tools: the cache folder must be open to it.
    chmodSync(options.toolchainCacheDir, 0o755);
    const logs = new LogHub(join(options.dataDir, 'logs'), { limits: options.logLimits, warn: log });
    void logs.restrictExistingFiles();
    const { drainForbidden, notifyGuard } = platformGuards(options, acmeChallenge.port);
    // Log drains: every app line (and access record, when asked) waits on disk for its receiver.
    const drains = new DrainService({
      store,
      dir: join(options.dataDir, 'drains'),
      bufferBytes: options.drainBufferBytes,
      appLogs: logs,
      accessLogs: traffic.accessLog.hub,
      events: told.events,
      forbidden: drainForbidden,
      log,
    });
    drains.start();
    this.onStop('log drains', () => drains.stop());
    traffic.metrics.watchDrains(() => drains.figures());
    const notifications = await startNotifications({ store, events: told.events, guard: notifyGuard, smtp: options.smtp, log });
    this.onStop('notifications', () => notifications.dispatcher.stop());
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
    this.onStop('add-on size checks', () => sizeWatch.stop());
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
    });
    this.onStop('backups', () => backupService.stop());
    // One platform backup at a time (by hand or scheduled): each clears the temporary folders
    // a crashed one left, which must not be another's in progress.
    let platformBackups: Promise<unknown> = Promise.resolve();
    const backupPlatform = (to: string, keep?: number) => {
      const next = platformBackups.then(() => takePlatformBackupNow(to, keep));
      platformBackups = next.catch(() => undefined);
      return next;
    };
    const takePlatformBackupNow = (to: string, keep?: number) =>
      takePlatformBackup(
        {
          dataDir: options.dataDir,
          store,
          backups: backupService.backups,
          backupStore: backupService.backupStore,
          version: slipwayVersion(),
          log,
          reserve,
        },
        to,
        keep,
      );
    const scheduledPlatformBackups = options.platformBackup && schedulePlatformBackups(options.platformBackup, backupPlatform, log);
    if (scheduledPlatformBackups) this.onStop('platform backups', () => scheduledPlatformBackups.stop());
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
    this.onStopDataPlane(
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
    this.onStop('liveness checks', () => runtime.stopLivenessMonitor());
    const certificates = await startCertificates({
      options,
      store,
      router,
      challenges: acmeChallenges,
      applyRoutes: () => runtime.applyRoutes(),
      onRoutesApplied: (listener) => runtime.onRoutesApplied(listener),
      log,
    });
    this.onStop('certificates', () => certificates.manager.stop());
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
      log,
      onBuildFinished: (outcome, seconds) => traffic.metrics.buildFinished(outcome, seconds),
      disks,
    });

    this.onStop('deployments', () => deployer.cancelAll('The daemon stopped while this deployment was running.'));

    const ssh = new GitSshServer({
      host: options.listen,
      port: options.sshPort,
      hostKeyPath: join(options.dataDir, 'ssh_host_ed25519_key'),
      repos,
      hooks: makeReceiverHooks(store, deployer, endpoints, disks),
      log,
    });
    const { port: sshPort } = await ssh.start();
    drainForbidden.ports.push(sshPort);
    this.onStop('git over SSH', () => ssh.stop());

    // docs/behaviour.md, Cron jobs: each app's jobs, once per schedule, in one-off sandboxes of its release.
    const cron = makeCronScheduler({
      store,
      events: told.events,
      appVars: appEnv,
      appLog: (appId, stream, line) => logs.append(appId, stream, line),
      runOneOff: (app, argv, onData) =>
        startOneOff({ store, runtime, sandboxes: policy, sandboxHost: sandboxes, networks: backend, instances }, app, argv, onData),
      log,
    });
    this.onStop('cron jobs', () => cron.stop());
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
        quotas: new Quotas(store, options.defaultQuotas),
        services: {
          deployer,
          runtime,
          logs,
          repos,
          catalog,
          disks,
          removeApp: async (app) => {
            await removeApp({ store, runtime, deployer, repos, appUsers, logs, dataDir: options.dataDir, disks }, app);
            await traffic.forgetApp(app.id);
            // The app is gone already: images left behind are pruned at the next start, not an error.
            if ('forgetApp' in instanceBackend)
              await instanceBackend
                .forgetApp(app.id)
                .catch((e: Error) => log(`could not remove the release images of ${app.id}: ${e.message}`));
            drains.sync();
          },
          // A run's output goes to the app's log too (marked [run]), and so to its drains.
          runOneOff: async (app, argv, onData) => {
            const output = oneOffLog((stream, line) => logs.append(app.id, stream, line), onData);
            const deps = { store, runtime, sandboxes: policy, sandboxHost: sandboxes, networks: backend, instances };
            const run = await startOneOff(deps, app, argv, output.onData);
            void run.done.finally(() => output.end());
            return run;
          },
          sandboxOf: (app) => policy.instance(app),
          domains: certificates.manager,
          backupPlatform: async (to) => {
            const report = await backupPlatform(to);
            log(`Platform backup written to ${report.path}.`);
            return report;
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
            setImmediate(() => this.markSystemStopped());
            return {
              apps: serving.map((app) => app.name),
              instances: instanceCount,
              addon_servers: addonServers,
              router: 'drained and stopped',
            };
          },
        },
        addons,
        backups: backupService.backups,
        traffic,
        cron,
        drains: { service: drains, forbidden: drainForbidden },
        notifications: { guard: notifyGuard, smtp: notifications.smtp },
      },
      { fallback: consoleHandler() },
    );
    await new Promise<void>((resolve, reject) => {
      api.once('error', reject);
      api.listen(options.apiPort, options.listen, () => resolve());
    });
    this.onStop('API', () => closeServer(api));
    // Before the API closes (stoppers run in reverse order): a one-off command's session keeps
    // the API open until the command ends, and one-off commands end with the daemon.
    if (instances) this.onStop('swarm one-off commands', () => instances.endOneOffs());
    // Likewise a `slipway run` in a local sandbox (and a build): killed before the API closes, or
    // its open session would hold the close until the client gave up. Instances are not touched.
    this.onStop('one-off commands', () => sandboxes.killAll({ keepOutliving: true }));
    const port = (api.address() as AddressInfo).port;
    drainForbidden.ports.push(port);
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
    if (restored) this.afterRestore(restored, store, deployer, backupService.backups);

    logReady(log, options, { apiUrl, sshPort, caCertificatePath: certificates.caCertificatePath, first });
    return { apiUrl };
  }

  /**
   * A platform restored from a backup: each app that served is built again from the commit it
   * served (releases are build output, not in the backup), and each Redis add-on loads its
   * snapshot through the add-on restore now that its server runs.
   */
  private afterRestore(
    restored: RestoredPlatform,
    store: Store,
    deployer: Deployer,
    backups: import('../backups/addon-backups.js').AddonBackups,
  ): void {
    for (const { appId, commit } of restored.rebuild) {
      const app = store.apps.byId(appId);
      if (!app) continue;
      const deployment = deployer.enqueue(app, { commit, cause: 'platform restore', userId: null, mode: 'build' });
      this.log(`Restore: ${app.name} (${app.id}) is built again from commit ${commit.slice(0, 12)} (deployment ${deployment.id}).`);
    }
    for (const { addonId, backupId } of restored.redis) {
      const addon = store.addons.byId(addonId);
      if (!addon) continue;
      void backups
        .restore(addon, { backupId })
        .then(() => this.log(`Restore: the Redis add-on ${addon.name} loaded its backup ${backupId}.`))
        .catch((error: Error) =>
          this.log(`Restore: the Redis add-on ${addon.name} could not load its backup ${backupId}: ${error.message}`),
        );
    }
  }

  async stop(scope: StopScope = 'all'): Promise<void> {
    while (this.stoppers.length) {
      const { name, stop, detach } = this.stoppers.pop()!;
      try {
        await (scope === 'all' ? stop : detach)();
      } catch (error) {
        this.log(`While stopping the ${name}: ${(error as Error).message}`);
      }
    }
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}
