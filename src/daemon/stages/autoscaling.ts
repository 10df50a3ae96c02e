import { Autoscaler } from '../../autoscaling/autoscaler.js';
import type { LogHub } from '../../logs/log-hub.js';
import type { AppRuntime } from '../../serving/app-runtime.js';
import type { Store } from '../../store/store.js';
import type { DaemonBase, EdgeBuilt } from './stage.js';

/**
 * The autoscaler: every app with a range of instances is sampled (its instances' CPU, its
 * requests at the router) and scaled through the runtime; each decision is told to the lifecycle
 * hub as "app scaled" (the metrics count it, the notifications tell it). Needs: `store`, `logs`,
 * `runtime`, the edge's `router`. Provides: `autoscaler`.
 */
export function autoscaling(needs: DaemonBase & Pick<EdgeBuilt, 'router'> & { store: Store; logs: LogHub; runtime: AppRuntime }) {
  const { store, logs, runtime, router, lifecycle, stoppers, log } = needs;
  const autoscaler = new Autoscaler({
    store,
    logs,
    instancesOf: (appId) => runtime.instancesOf(appId),
    scale: (app, appLog) => runtime.scale(app, appLog),
    routerLoad: () => router.appLoad(),
    onDecision: (decision) => lifecycle.publish('app scaled', { decision }),
    log,
  });
  autoscaler.start();
  // Stopped before the instances are (stoppers run in reverse order), a change under way awaited.
  stoppers.control('autoscaling', () => autoscaler.stop());
  return { autoscaler };
}
