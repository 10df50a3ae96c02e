import { Autoscaler } from '../../autoscaling/autoscaler.js';
import { AUTOSCALING_CAUSE } from '../../core/scaling-ranges.js';
import type { Deployer } from '../../pipeline/deployer.js';
import type { AppRow } from '../../store/apps.js';
import type { LogHub } from '../../logs/log-hub.js';
import type { AppRuntime } from '../../serving/app-runtime.js';
import type { Store } from '../../store/store.js';
import type { DaemonBase, EdgeBuilt } from './stage.js';

/**
 * The autoscaler: every app with a range of instances is sampled (its instances' CPU, its
 * requests at the router) and scaled through the runtime; each decision is told to the lifecycle
 * hub as "app scaled" (the metrics count it, the notifications tell it). A change of flavour
 * restarts the release through the deployer, as `slipway restart` does. Needs: `store`, `logs`,
 * `runtime`, `deployer`, the edge's `router`. Provides: `autoscaler`.
 */
export function autoscaling(
  needs: DaemonBase & Pick<EdgeBuilt, 'router'> & { store: Store; logs: LogHub; runtime: AppRuntime; deployer: Deployer },
) {
  const { store, logs, runtime, router, deployer, lifecycle, stoppers, log } = needs;
  /** A hitless restart of the app's current release (its deployment is the decision's activity record), awaited. */
  const restart = (app: AppRow, line: string): Promise<'OK' | 'FAIL' | 'CANCELLED'> => {
    const release = store.deployments.release(app.id);
    const commit = release ? store.deployments.byId(release.deployment_id)?.commit_sha : undefined;
    if (!commit) return Promise.resolve('CANCELLED');
    return new Promise((resolve) => {
      let id = '';
      const off = store.deployments.onFinished((d) => {
        if (d.id !== id) return;
        off();
        resolve(d.state === 'OK' ? 'OK' : d.state === 'FAIL' ? 'FAIL' : 'CANCELLED');
      });
      id = deployer.enqueue(app, { commit, cause: AUTOSCALING_CAUSE, userId: null, mode: 'reuse-release' }).id;
      logs.append(id, 'system', `==> Autoscaling: ${line}`);
    });
  };
  const autoscaler = new Autoscaler({
    store,
    logs,
    instancesOf: (appId) => runtime.instancesOf(appId),
    scale: (app, appLog) => runtime.scaling.scale(app, appLog),
    workerInstancesOf: (appId) => runtime.workerInstancesOf(appId),
    scaleWorkers: (app, appLog) => runtime.scaleWorkers(app, appLog),
    restart,
    routerLoad: () => router.appLoad(),
    ...(runtime.scaling.canSleep()
      ? {
          sleep: (appId: string) => runtime.scaling.sleep(appId),
          wake: (app: AppRow, appLog: (line: string) => void) => runtime.scaling.wake(app, appLog),
          wakeRequests: () => runtime.scaling.wakeRequests(),
        }
      : {}),
    onDecision: (decision) => lifecycle.publish('app scaled', { decision }),
    log,
  });
  autoscaler.start();
  // Stopped before the instances are (stoppers run in reverse order), a change under way awaited.
  stoppers.control('autoscaling', () => autoscaler.stop());
  return { autoscaler };
}
