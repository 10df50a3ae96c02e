import { existsSync } from 'node:fs';
import type { Deployment } from '../store/deployments.js';
import type { Store } from '../store/store.js';
import { parseReleaseSpec } from '../serving/release-spec.js';

/**
 * Whether the release a deployment built is still on disk, so a rollback or a restart on its
 * commit can start it again without a rebuild (older ones are removed beyond the kept count).
 */
export function releaseKeptOnDisk(d: Deployment): boolean {
  if (d.state !== 'OK' || !d.release_json) return false;
  try {
    return existsSync(parseReleaseSpec(d.release_json).releaseDir);
  } catch {
    return false;
  }
}

/**
 * The app's releases still on disk, each folder once (a rollback's record names the folder of
 * the deployment that built it), the serving one first: what a rollback can go back to, and so
 * what a platform backup keeps.
 */
export function keptReleaseFolders(store: Store, appId: string): Array<{ releaseDir: string }> {
  const folders: string[] = [];
  const serving = store.deployments.release(appId)?.release_dir;
  if (serving && existsSync(serving)) folders.push(serving);
  for (const d of store.deployments.withReleases(appId)) {
    if (!releaseKeptOnDisk(d)) continue;
    const folder = parseReleaseSpec(d.release_json!).releaseDir;
    if (!folders.includes(folder)) folders.push(folder);
  }
  return folders.map((releaseDir) => ({ releaseDir }));
}
