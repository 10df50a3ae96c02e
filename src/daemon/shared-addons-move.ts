import { PostgresqlProvider } from '../addons/postgresql/postgresql-provider.js';
import type { AddonProvider } from '../addons/provider.js';
import { moveToOwnServer } from '../backups/postgresql/move-to-own-server.js';
import type { AddonAccess } from '../network/addon-access-sync.js';
import type { Deployer } from '../pipeline/deployer.js';
import type { Store } from '../store/store.js';

/** How long the linked apps may take to restart onto an add-on's new server. */
const SWITCH_TIMEOUT_MS = 10 * 60_000;
/** How long the requests already with the instances may take to finish once new ones are held. */
const IN_FLIGHT_TIMEOUT_MS = 30_000;

/** What the move asks of the router: hold an app's new requests, and say what its instances still serve. */
export interface HoldingRouter {
  hold(appId: string): Promise<void>;
  release(appId: string): Promise<void>;
  appConnections(): Promise<Map<string, number> | undefined>;
}

/**
 * The first start of a version with a server per PostgreSQL add-on: every add-on still on the
 * cluster shared by earlier versions moves to a server of its own, one after the other, while
 * the apps serve (backups/postgresql/move-to-own-server.ts says how; writes to an add-on wait
 * while it moves). Once none is left there, the shared cluster stops for good and its folder is
 * kept aside. A move that fails leaves its add-on where it was, to be tried at the next start.
 */
export async function moveSharedAddons(o: {
  store: Store;
  postgresql: AddonProvider | undefined;
  deployer: Deployer;
  addonAccess: AddonAccess;
  router: HoldingRouter;
  /** A backup of the moved add-on on its own server, so a restore to any second from now on has one to start from. */
  backUp(addonId: string): Promise<void>;
  log(line: string): void;
  tellApps(appIds: Iterable<string>, line: string): void;
}): Promise<void> {
  const provider = o.postgresql;
  if (!(provider instanceof PostgresqlProvider) || !provider.servers) return;
  if (!(await provider.sharedClusterRuns())) return;
  const waiting = o.store.addons.all().filter((row) => row.provider === 'postgresql' && isShared(o.store.addons.config(row)));
  let left = waiting.length;
  for (const addon of waiting) {
    const apps = o.store.links.appsOfAddon(addon.id);
    o.log(`Moving the PostgreSQL add-on ${addon.name} (${addon.id}) to a server of its own; its writes wait meanwhile.`);
    try {
      const report = await moveToOwnServer({
        provider,
        addon,
        config: o.store.addons.config(addon),
        log: o.log,
        holdApps: () => holdApps(o.router, apps),
        switchApps: async (config) => {
          o.store.addons.setConfig(addon.id, config);
          await o.addonAccess.linksChanged();
          await restartOnto(o, addon.name, apps);
        },
      });
      left--;
      const line =
        `The PostgreSQL add-on ${addon.name} now has a server of its own (${report.tables} tables, ${report.rows} rows copied; ` +
        `its apps' requests waited ${(report.heldMs / 1000).toFixed(1)} s).`;
      o.log(line);
      o.tellApps(apps, line);
      await o.backUp(addon.id).catch((error: Error) => o.log(`The first backup of ${addon.name} on its own server: ${error.message}`));
    } catch (error) {
      o.log((error as Error).message);
    }
  }
  if (left > 0) return;
  const kept = await provider.retireSharedCluster();
  if (kept)
    o.log(
      `No add-on is left on the shared PostgreSQL cluster: it is stopped; its data folder is kept as ${kept} (remove it once satisfied).`,
    );
}

/**
 * The apps' new requests wait at the router; resolves once what their instances were serving is
 * done (or after IN_FLIGHT_TIMEOUT_MS), with what lets the held requests go on.
 */
async function holdApps(router: HoldingRouter, appIds: string[]): Promise<() => Promise<void>> {
  const release = async () => {
    for (const appId of appIds) await router.release(appId);
  };
  try {
    for (const appId of appIds) await router.hold(appId);
    const deadline = Date.now() + IN_FLIGHT_TIMEOUT_MS;
    for (;;) {
      const serving = await router.appConnections();
      if (!serving || appIds.every((appId) => (serving.get(appId) ?? 0) === 0) || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } catch (error) {
    await release().catch(() => undefined);
    throw error;
  }
  return release;
}

function isShared(config: Record<string, string>): boolean {
  return config.mode !== 'dedicated' && config.mode !== 'external';
}

/** Restarts each linked app that runs (same release, fresh variables) and waits for them all. */
async function restartOnto(o: { store: Store; deployer: Deployer }, addonName: string, appIds: string[]): Promise<void> {
  const waits: Array<Promise<void>> = [];
  for (const appId of appIds) {
    const app = o.store.apps.byId(appId);
    const release = o.store.deployments.release(appId);
    if (!app || release?.wanted !== 'running') continue;
    const built = o.store.deployments.byId(release.deployment_id);
    if (!built) continue;
    const deployment = o.deployer.enqueue(app, {
      commit: built.commit_sha,
      cause: `add-on ${addonName} moved to a server of its own`,
      userId: null,
      mode: 'reuse-release',
    });
    waits.push(finished(o.store, deployment.id));
  }
  await Promise.all(waits);
}

function finished(store: Store, id: string): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, SWITCH_TIMEOUT_MS);
    const off = store.deployments.onFinished((d) => {
      if (d.id === id) done();
    });
    function done() {
      clearTimeout(timer);
      off();
      resolve();
    }
    if (store.deployments.byId(id)?.state !== 'WIP') done();
  });
}
