import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_APP_DISK_BUDGET } from '../../core/disk-size.js';
import { placeDataPlaneIn } from '../../executor/data-plane-cgroup.js';
import { LocalNetnsBackend } from '../../instances/local/local-netns-backend.js';
import { deleteFirewallTable } from '../../network/firewall.js';
import { AppDisks } from '../../storage/app-disks.js';
import { BuildSecretsMount } from '../../pipeline/build-secrets-mount.js';
import { DeployLayout } from '../../storage/deploy-layout.js';
import { removeAppFiles } from '../../storage/app-files.js';
import type { Lifecycle } from '../lifecycle.js';
import { AppUsers, parseUidRange } from '../../sandbox/app-users.js';
import { SandboxHost } from '../../sandbox/sandbox-host.js';
import type { Store } from '../../store/store.js';
import { lockDownDataFolder } from '../data-folder-modes.js';
import { migrateAppFolders, moveIntoAppFolders } from '../migrate-app-folders.js';
import { type DaemonOptions, networkNames } from '../options.js';
import type { Stoppers } from '../stoppers.js';

/**
 * This machine's sandboxes and the apps' folders, made ready before anything runs in them: the
 * sandbox host and the local instance backend, what an earlier daemon left (its builds and
 * one-off commands killed, its instances kept for adoption), each app's user and filesystem at
 * its budget, the build credentials' mount, and no build folder of an interrupted build.
 * Apart from the daemon's wiring because the order here is what makes a restart safe.
 */
export async function startSandboxes(input: {
  options: DaemonOptions;
  store: Store;
  stoppers: Stoppers;
  lifecycle: Lifecycle;
  /** Set as soon as each is mounted, so that a start failing after it still unmounts it. */
  unmounts: { appDisks(): Promise<void>; buildSecrets(): Promise<void> };
  log(line: string): void;
}) {
  const { options, store, stoppers, lifecycle, unmounts, log } = input;
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
  stoppers.dataPlane(
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
  const disks = new AppDisks({ layout, budgetOf: (appId) => store.apps.byId(appId)?.disk_budget_bytes ?? appDiskBudget, log });
  await disks.ensureAll(store.apps.all().map((app) => app.id));
  unmounts.appDisks = () => disks.unmountAll();
  // A deleted app's releases, caches and filesystem go once its user is gone.
  lifecycle.on('app removing', ({ appId }) => removeAppFiles(layout, disks, appId));
  await moveIntoAppFolders(store, layout, disks, log);
  await migrateAppFolders(store, appUsers, layout, log);
  const buildSecrets = new BuildSecretsMount(layout.buildSecretsRoot());
  await buildSecrets.ensure();
  unmounts.buildSecrets = () => buildSecrets.unmount();
  for (const app of store.apps.all()) {
    rmSync(layout.buildFolder(app.id), { recursive: true, force: true });
    rmSync(layout.scratchesFolder(app.id), { recursive: true, force: true });
    sandboxes.sweepLayers(app.id);
  }
  return { names, sandboxes, backend, appUsers, layout, appDiskBudget, disks, buildSecrets };
}
