import { rm } from 'node:fs/promises';
import type { AppDisks } from './app-disks.js';
import type { DeployLayout } from './deploy-layout.js';

/**
 * Removes a deleted app's files: its releases and caches, what a data folder from before per-app
 * filesystems kept elsewhere, then the filesystem itself. Every folder is of the platform's
 * layout, named by the app id; the app's user is gone already, so nothing of it runs meanwhile.
 */
export async function removeAppFiles(layout: DeployLayout, disks: AppDisks, appId: string): Promise<void> {
  await rm(layout.releasesFolder(appId), { recursive: true, force: true });
  await rm(layout.appCacheFolder(appId), { recursive: true, force: true });
  // Releases from before per-app filesystems, then the filesystem itself.
  const legacy = layout.legacyFolders(appId);
  for (const folder of [legacy.releases, legacy.cache, legacy.repository]) await rm(folder, { recursive: true, force: true });
  await disks.remove(appId);
}
