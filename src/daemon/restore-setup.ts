import { createReadStream, existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AddonBackups } from '../backups/addon-backups.js';
import { extractRelease } from '../backups/platform/release-archives.js';
import {
  assertEmptyDataFolder,
  type CheckedBackup,
  checkPlatformBackup,
  RESTORED_RELEASES_FOLDER,
  type RestoredPlatform,
  restorePlatform,
} from '../backups/platform/platform-restore.js';
import type { DeployLayout } from '../storage/deploy-layout.js';
import type { Deployer } from '../pipeline/deployer.js';
import type { AppUsers } from '../sandbox/app-users.js';
import { ownedFolder } from '../sandbox/owned-folder.js';
import { ensureTool } from '../toolchains/ensure-tool.js';
import { isNpmTool } from '../toolchains/tool-packages.js';
import type { Store } from '../store/store.js';
import { backupStoreOptions } from './backups-setup.js';
import type { DaemonOptions } from './options.js';

/**
 * `slipway server --restore-from`, in the three moments of a start it belongs to. Apart from the
 * daemon's wiring because each moment has its own promise to keep about the data folder.
 */

/**
 * Before anything is created in the data folder: the folder must be empty and the backup whole,
 * so a refusal leaves the folder as it was. Undefined when no restore was asked for.
 */
export async function checkRestoreSource(options: DaemonOptions): Promise<CheckedBackup | undefined> {
  if (!options.restoreFrom) return undefined;
  await assertEmptyDataFolder(options.dataDir);
  const backupStore = backupStoreOptions(options.dataDir, options.backups);
  return checkPlatformBackup(options.restoreFrom, { keyFile: options.backups?.keyFile, backupStore, dataDir: options.dataDir }).catch(
    (error: Error) => {
      throw new Error(`Cannot restore from ${options.restoreFrom}: ${error.message} Nothing was written to ${options.dataDir}.`);
    },
  );
}

/** Writes the backup into the data folder, before the store is opened; a failure says what is left. */
export async function restoreDataFolder(
  options: DaemonOptions,
  backup: CheckedBackup,
  log: (line: string) => void,
): Promise<RestoredPlatform> {
  try {
    return await restorePlatform({
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
  } finally {
    await backup.cleanup();
  }
}

/**
 * Once the apps' filesystems are mounted and their users made, before any release starts: each
 * kept release the backup carried is unpacked into its folder, as the app's user, and the
 * toolchains its record names are fetched into this machine's toolchain cache (its record then
 * names them there). A release that did not unpack is not kept: a serving one among them is
 * built again from its commit instead (added to `restored.rebuild`).
 */
export async function unpackRestoredReleases(
  restored: RestoredPlatform,
  deps: { store: Store; layout: DeployLayout; appUsers: AppUsers; toolchainCacheDir: string; log(line: string): void },
): Promise<void> {
  const { store, layout, appUsers, log } = deps;
  let unpacked = 0;
  for (const { appId, deploymentId, archive } of restored.releases) {
    const dest = layout.releaseFolder(appId, deploymentId);
    try {
      const user = await appUsers.ensure(appId);
      await ownedFolder(layout.releasesFolder(appId), user);
      await ownedFolder(dest, user);
      await extractRelease(createReadStream(archive), dest, user);
      unpacked++;
    } catch (error) {
      log(`Restore: the release ${deploymentId} of ${appId} could not be unpacked (${(error as Error).message}); it is not kept.`);
      await rm(dest, { recursive: true, force: true });
    }
  }
  await rm(join(layout.dataDir, RESTORED_RELEASES_FOLDER), { recursive: true, force: true });
  if (restored.releases.length) log(`Restore: ${unpacked} of ${restored.releases.length} kept release(s) unpacked.`);
  const restoredApps = new Set(restored.releases.map((r) => r.appId));
  for (const appId of restoredApps) {
    for (const deployment of store.deployments.withReleases(appId, 10_000)) {
      const json = await withLocalToolchains(deployment.release_json!, deps.toolchainCacheDir, log);
      if (json) store.deployments.setReleaseJson(deployment.id, json);
    }
    const release = store.deployments.release(appId);
    if (!release) continue;
    const json = await withLocalToolchains(release.start_json, deps.toolchainCacheDir, log);
    if (json) store.deployments.setRelease({ ...release, start_json: json });
    if (release.wanted === 'running' && !existsSync(release.release_dir)) {
      const deployment = store.deployments.byId(release.deployment_id);
      if (deployment) restored.rebuild.push({ appId, commit: deployment.commit_sha });
      store.deployments.setWanted(appId, 'stopped');
    }
  }
}

/**
 * A release record whose tools (`<cache>/<tool>/<version>/bin`, fetched by version) sit in
 * another toolchain cache, or are not fetched here yet: fetched into this one, the record naming
 * them there. Undefined when nothing changed. A tool that cannot be fetched is logged: starting
 * that release then fails, and the release serving stays.
 */
async function withLocalToolchains(json: string, cacheDir: string, log: (line: string) => void): Promise<string | undefined> {
  const spec = JSON.parse(json) as { toolPath?: string[] };
  if (!Array.isArray(spec.toolPath)) return undefined;
  let changed = false;
  const toolPath: string[] = [];
  for (const dir of spec.toolPath) {
    const parts = /\/([a-z]+)\/(\d+\.\d+\.\d+[^/]*)\/bin$/.exec(dir);
    const tool = parts?.[1];
    if (!parts || !tool || !isNpmTool(tool)) {
      toolPath.push(dir);
      continue;
    }
    const local = join(cacheDir, tool, parts[2]!, 'bin');
    if (!existsSync(join(local, tool))) {
      await ensureTool(cacheDir, tool, parts[2]!, (line) => log(`Restore: ${line}`)).catch((error: Error) =>
        log(`Restore: ${tool} ${parts[2]} could not be fetched for a kept release: ${error.message}`),
      );
    }
    changed ||= local !== dir;
    toolPath.push(local);
  }
  return changed ? JSON.stringify({ ...spec, toolPath }) : undefined;
}

/**
 * Once everything runs: each app that served is built again from the commit it served (releases
 * are build output, not in the backup), and each Redis add-on loads its snapshot through the
 * add-on restore now that its server runs.
 */
export function resumeAfterRestore(
  restored: RestoredPlatform,
  deps: { store: Store; deployer: Deployer; backups: AddonBackups; log(line: string): void },
): void {
  const { store, deployer, backups, log } = deps;
  for (const { appId, commit } of restored.rebuild) {
    const app = store.apps.byId(appId);
    if (!app) continue;
    const deployment = deployer.enqueue(app, { commit, cause: 'platform restore', userId: null, mode: 'build' });
    log(`Restore: ${app.name} (${app.id}) is built again from commit ${commit.slice(0, 12)} (deployment ${deployment.id}).`);
  }
  for (const { addonId, backupId } of restored.redis) {
    const addon = store.addons.byId(addonId);
    if (!addon) continue;
    void backups
      .restore(addon, { backupId })
      .then(() => log(`Restore: the Redis add-on ${addon.name} loaded its backup ${backupId}.`))
      .catch((error: Error) => log(`Restore: the Redis add-on ${addon.name} could not load its backup ${backupId}: ${error.message}`));
  }
}
