import { SwarmBackend } from '../../instances/swarm/swarm-backend.js';
import { join } from 'node:path';
import { DEFAULT_BUILD_FLAVOR, DEFAULT_INSTANCE_FLAVOR, buildLimits, flavorNamed } from '../../core/flavors.js';
import { appEnvironment } from '../../links/app-environment.js';
import type { LogHub } from '../../logs/log-hub.js';
import { makeProviders } from '../../providers/registry.js';
import { RepoStore } from '../../receiver/repo-store.js';
import { AppRuntime } from '../../serving/app-runtime.js';
import type { Store } from '../../store/store.js';
import { flavorLimits, makeSandboxPolicy } from '../sandbox-policy.js';
import { bucketsOfApp } from '../app-buckets.js';
import { exclusiveVolumesOf } from '../../addons/fs-bucket/exclusive-volume.js';
import type { DaemonBase, EdgeBuilt, NetworkBuilt, SandboxesBuilt } from './stage.js';

/** An instance may take this long between SIGTERM and SIGKILL when its app is deleted. */
const DELETION_GRACE_MS = 3000;

/**
 * The apps' instances (`AppRuntime`): who each runs as and with what limits, the environment it
 * receives, the liveness checks that replace a stuck one; a restarted or replaced instance is
 * told to the lifecycle hub (the metrics and the notifications subscribe). Needs: `store`,
 * `logs`, the sandboxes' `appUsers` and `layout`, the network's `addons` and `instanceBackend`,
 * the edge's `router`. Provides: `runtime`, `repos`, `appEnv`, `policy`, `providers`.
 */
export function serving(
  needs: DaemonBase &
    Pick<SandboxesBuilt, 'appUsers' | 'layout'> &
    Pick<NetworkBuilt, 'addons' | 'instanceBackend'> &
    Pick<EdgeBuilt, 'router'> & { store: Store; logs: LogHub },
) {
  const { options, store, logs, appUsers, layout, addons, instanceBackend, router, stoppers, lifecycle, log } = needs;
  const repos = new RepoStore(join(options.dataDir, 'repos'), (appId) => layout.repository(appId));
  // Every variable an app receives: linked apps' exposed config < add-ons' < its own (src/core/merge-env.ts).
  const appEnv = (appId: string) => appEnvironment(store, addons, appId);
  const policy = makeSandboxPolicy({
    appUsers,
    toolchainCacheDir: options.toolchainCacheDir,
    instanceLimits: (app) => flavorLimits(flavorNamed(app.flavor ?? DEFAULT_INSTANCE_FLAVOR)),
    buildLimits: (app) => flavorLimits(buildLimits(flavorNamed(app.build_flavor ?? DEFAULT_BUILD_FLAVOR))),
    bucketsOf: (app) => bucketsOfApp(store, addons, appEnv(app.id), app.id),
  });
  const providers = makeProviders();
  const runtime = new AppRuntime({
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
    onInstanceRestart: (appId) => lifecycle.publish('instance restarted', { appId }),
    hasExclusiveVolume: (appId) => exclusiveVolumesOf(store, appId).length > 0,
    holds: router,
    // Scale to zero is the local backend's: a Swarm service's replicas are not stopped for idleness.
    ...(instanceBackend instanceof SwarmBackend ? {} : { sleepHolds: router }),
  });
  stoppers.dataPlane(
    'instances',
    () => runtime.shutdown(),
    () => runtime.detach(),
  );
  // docs/behaviour.md, Liveness; stopped before the instances are (stoppers run in reverse order).
  runtime.startLivenessMonitor({
    onReplaced: (appId) => lifecycle.publish('instance replaced', { appId }),
  });
  stoppers.control('liveness checks', () => runtime.stopLivenessMonitor());
  // A deleted app's instances end (nothing of them is kept, so the grace is short), then its
  // repository goes, and the router forgets it once its record is gone.
  lifecycle.on('app ending', ({ appId }) => runtime.end(appId, DELETION_GRACE_MS));
  lifecycle.on('app removing', ({ appId }) => repos.remove(appId));
  lifecycle.on('app deleted', () => runtime.applyRoutes());
  return { runtime, repos, appEnv, policy, providers };
}
