import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import type { Store } from '../store/store.js';
import type { LogHub } from '../logs/log-hub.js';
import { UntrustedTree } from '../sandbox/untrusted-tree.js';
import type { DeployLayout } from '../storage/deploy-layout.js';
import { parseReleaseSpec } from '../serving/release-spec.js';
import { PreRunLayers } from './pre-run-layer.js';

/** Releases kept on disk per app (the serving one among them) unless configured otherwise. */
export const DEFAULT_KEPT_RELEASES = 5;

/**
 * Keeps the newest releases of an app (the serving one among them) and removes older ones.
 * Restarts and rollbacks reuse a folder built by an earlier deployment: what is kept is counted
 * in folders, newest first, and the serving one is never removed. A release's pre-run layer
 * (pre-run-layer.ts) is kept and removed with it.
 */
export async function pruneReleases(store: Store, layout: DeployLayout, appId: string, kept = DEFAULT_KEPT_RELEASES): Promise<void> {
  const folders: string[] = [];
  const serving = store.deployments.release(appId)?.release_dir;
  if (serving) folders.push(serving);
  for (const d of store.deployments.withReleases(appId)) {
    const folder = parseReleaseSpec(d.release_json!).releaseDir;
    if (!folders.includes(folder) && folders.length < kept) folders.push(folder);
  }
  const keep = new Set(folders.map((f) => basename(f)));
  // The folder belongs to the app's user: an entry is removed itself, a link never followed.
  // Releases built before per-app filesystems stay in the old shared folder until removed here.
  for (const folder of [layout.releasesFolder(appId), layout.legacyFolders(appId).releases]) {
    if (!existsSync(folder)) continue;
    const releases = new UntrustedTree(folder, { name: "the app's releases folder" });
    for (const entry of await releases.list('')) {
      if (!keep.has(entry.name)) await releases.remove(entry.name);
    }
  }
  // What the pre-run hooks of the removed releases wrote goes with them.
  await new PreRunLayers(layout).prune(appId, keep);
}

/**
 * Only the newest deployments of an app keep their logs (older ones were removed by earlier
 * runs): the rest are removed in the background, a failure only reported.
 */
export function pruneDeploymentLogs(store: Store, logs: LogHub, appId: string, report: (line: string) => void): void {
  const kept = logs.limits.deploymentLogsPerApp;
  const older = store.deployments
    .listForApp(appId, kept + 100)
    .slice(kept)
    .filter((d) => d.state !== 'WIP');
  void logs
    .remove(older.map((d) => d.id))
    .catch((e) => report(`Could not remove old deployment logs of ${appId}: ${(e as Error).message}`));
}
