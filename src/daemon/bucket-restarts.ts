import type { Deployer } from '../pipeline/deployer.js';
import type { Store } from '../store/store.js';

/** How long a restore waits for the linked apps' restarts before it says they are still running. */
const RESTART_WAIT_MS = 15 * 60_000;

/**
 * After an FS bucket got a restored image: each linked app that serves is restarted on its
 * current release (a deployment, as `slipway restart`: new instances start with the new
 * filesystem bound, pass their health check, take the traffic, and the old ones drain), and
 * this resolves once those deployments ended. A restart that fails leaves the old instances
 * serving (on the old files) and is said in the daemon's log and the app's deployment.
 */
export async function restartBucketApps(
  addonId: string,
  deps: { store: Store; deployer: Deployer; log(line: string): void },
): Promise<void> {
  const { store, deployer, log } = deps;
  const started: Array<{ appName: string; id: string }> = [];
  for (const appId of store.links.appsOfAddon(addonId)) {
    const app = store.apps.byId(appId);
    const release = store.deployments.release(appId);
    if (!app || !release || release.wanted !== 'running') continue;
    const last = store.deployments.byId(release.deployment_id);
    if (!last) continue;
    const deployment = deployer.enqueue(app, {
      commit: last.commit_sha,
      cause: 'FS bucket restored',
      userId: null,
      mode: 'reuse-release',
    });
    started.push({ appName: app.name, id: deployment.id });
  }
  const deadline = Date.now() + RESTART_WAIT_MS;
  for (const { appName, id } of started) {
    for (;;) {
      const state = store.deployments.byId(id)?.state;
      if (state && state !== 'WIP') {
        if (state !== 'OK') log(`The restart of ${appName} on its restored FS bucket ended ${state} (deployment ${id}).`);
        break;
      }
      if (Date.now() > deadline) {
        log(`The restart of ${appName} on its restored FS bucket is still running (deployment ${id}).`);
        break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
