import type { Store } from '../store/store.js';
import type { AppRow } from '../store/apps.js';
import type { LogHub } from '../logs/log-hub.js';
import type { Instance, InstanceBackend } from '../instances/backend.js';
import { type ReleaseSpec, parseReleaseSpec } from './release-spec.js';
import type { ServingTable } from './serving-table.js';
import type { InstanceLauncher } from './instance-launch.js';
import { isWorkerInstance, type WorkerPool } from './worker-pool.js';

/** What restoring acts on of AppRuntime's table: each app's serving instances, drains, the router. */
export type RestoreTable = Pick<ServingTable, 'of' | 'serve' | 'drainInBackground' | 'takeOverRoutes'>;
/** How restoring starts the missing instances, and follows the adopted ones' states. */
export type RestoreLauncher = Pick<InstanceLauncher, 'launchNumbered' | 'stateChanged'>;

/**
 * At daemon start: the instances an earlier daemon left running are adopted as they run when
 * they serve their app's current release (the others are stopped); then every app whose
 * release should run and has fewer instances than its scale gets the missing ones, without a
 * rebuild. The router keeps its table until the adopted instances are in this daemon's.
 */
export async function restoreReleases(o: {
  store: Store;
  logs: LogHub;
  backend: InstanceBackend;
  table: RestoreTable;
  launcher: RestoreLauncher;
  /** The worker instances of apps with a range of workers: those adopted are handed to it, the missing ones it starts. */
  workers?: Pick<WorkerPool, 'restore'>;
  /** Holds a sleeping app's requests at the router (scale to zero): it stays asleep until one comes. */
  sleep?(appId: string): Promise<void>;
  log(line: string): void;
}): Promise<void> {
  const { store, logs, table, launcher } = o;
  const releases = releasesToRun(store, o.log);
  const found = await o.backend.adoptAll((found) => {
    if (releases.get(found.appId)?.deploymentId !== found.deploymentId) return undefined;
    return {
      onLog: (stream, line) => logs.append(found.appId, stream, line, found.instanceId),
      onStateChange: (state) => launcher.stateChanged(found.appId, found.instanceId, state),
    };
  });
  const adopted = found.filter((i) => !isWorkerInstance(i));
  const workerInstances = found.filter(isWorkerInstance);
  for (const [appId, release] of releases) {
    const app = store.apps.byId(appId)!;
    const wanted = wantedAtStart(app);
    const byNumber = new Map<number, Instance>();
    const extra: Instance[] = [];
    for (const instance of adopted.filter((i) => i.spec.appId === appId)) {
      const n = instance.spec.instanceNumber;
      if (n < wanted && !byNumber.has(n)) byNumber.set(n, instance);
      else extra.push(instance);
    }
    table.serve(appId, [...byNumber.values()]);
    if (extra.length) table.drainInBackground(appId, extra);
    if (byNumber.size) o.log(`Adopted ${byNumber.size} running instance(s) of ${app.name} (${appId}), release ${release.deploymentId}`);
  }
  // The router keeps the earlier start's table (it still reaches what that start ran: the
  // instances of another --subnet or backend) until every app's new instances passed their
  // health check; then this daemon's table replaces it, and only then are the replaced drained.
  const replacedOf: Array<[string, Instance[]]> = [];
  for (const [appId, release] of releases) {
    const app = store.apps.byId(appId)!;
    const wanted = wantedAtStart(app);
    const running = table.of(appId);
    // Missing numbers are started; outdated adopted instances are replaced, the new one first.
    const outdated = running.filter((i) => i.outdated !== undefined);
    const missing = Array.from({ length: wanted }, (_, n) => n).filter((n) => !running.some((i) => i.spec.instanceNumber === n));
    if (missing.length === 0 && outdated.length === 0) continue;
    const log = (line: string) => logs.append(appId, 'system', line);
    for (const instance of outdated) log(`Instance ${instance.spec.instanceNumber} is replaced: ${instance.outdated}`);
    try {
      log(`Restoring release ${release.deploymentId} (commit ${release.commit.slice(0, 12)}) after a daemon start`);
      const numbers = [...missing, ...outdated.map((i) => i.spec.instanceNumber)];
      const { healthy, failure } = await launcher.launchNumbered(app, release, log, numbers);
      const replaced = outdated.filter((i) => healthy.some((h) => h.spec.instanceNumber === i.spec.instanceNumber));
      table.serve(
        appId,
        [...table.of(appId).filter((i) => !replaced.includes(i)), ...healthy].sort((a, b) => a.spec.instanceNumber - b.spec.instanceNumber),
      );
      replacedOf.push([appId, replaced]);
      if (failure) throw failure.reason;
      o.log(`Restored ${app.name} (${app.id}) from release ${release.deploymentId}`);
    } catch (error) {
      o.log(`Could not restore ${app.name} (${app.id}): ${(error as Error).message}`);
    }
  }
  if (o.workers) await o.workers.restore(releases, workerInstances);
  else for (const instance of workerInstances) table.drainInBackground(instance.spec.appId, [instance]);
  await table.takeOverRoutes();
  for (const [appId, replaced] of replacedOf) table.drainInBackground(appId, replaced);
  for (const appId of releases.keys()) {
    const app = store.apps.byId(appId);
    if (!app?.asleep_since) continue;
    await o
      .sleep?.(appId)
      .catch((error) => o.log(`Could not hold the requests of ${app.name} (${appId}), asleep: ${(error as Error).message}`));
  }
}

/** An app asleep (scale to zero) stays so: no instance until a request wakes it; any other, its count. */
function wantedAtStart(app: AppRow): number {
  return app.asleep_since ? 0 : Math.max(1, app.instances ?? 1);
}

/** The release of every app whose record says it should run; one that cannot be read is told and left out. */
function releasesToRun(store: Store, log: (line: string) => void): Map<string, ReleaseSpec> {
  const releases = new Map<string, ReleaseSpec>();
  for (const record of store.deployments.allReleases()) {
    if (record.wanted !== 'running' || !store.apps.byId(record.app_id)) continue;
    try {
      releases.set(record.app_id, parseReleaseSpec(record.start_json));
    } catch (error) {
      log(`Could not read the release of ${record.app_id}: ${(error as Error).message}`);
    }
  }
  return releases;
}
