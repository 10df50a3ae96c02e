import type { Lifecycle } from '../lifecycle.js';
import { join } from 'node:path';
import { AcmeChallengeResponder } from '../../certificates/acme-challenge-responder.js';
import { startMetricsServer } from '../../metrics/metrics-server.js';
import { HaproxyRouter } from '../../router/haproxy/haproxy-router.js';
import { AUTOSCALING_CAUSE } from '../../core/scaling-ranges.js';
import type { RouterOptions } from '../../router/router.js';
import type { Store } from '../../store/store.js';
import type { DaemonOptions } from '../options.js';
import { closeServer, type Stoppers } from '../stoppers.js';
import { makeTrafficRecorder } from '../traffic-setup.js';

/**
 * The edge, what the outside world reaches first: the router (adopted when an earlier daemon
 * left it serving), the ACME challenge responder it passes HTTP-01 challenges to, what it
 * reports of each request (access logs, charts, metrics) and the Prometheus endpoint.
 */
export async function startEdge(input: {
  options: DaemonOptions;
  store: Store;
  stoppers: Stoppers;
  lifecycle: Lifecycle;
  log(line: string): void;
}) {
  const { options, store, stoppers, lifecycle, log } = input;
  // What the edge sees: the router reports each request here (access logs, charts, metrics).
  const traffic = makeTrafficRecorder({
    dataDir: options.dataDir,
    store,
    log,
    // Asked at each scrape of the metrics, which only comes once the router below has started.
    activeConnections: () => router.activeConnections(),
    appConnections: () => router.appConnections(),
    droppedAccessRecords: () => router.droppedAccessRecords(),
  });
  // ACME HTTP-01 challenges arrive at the router for any host; it passes them to this responder.
  const acmeChallenges = new AcmeChallengeResponder();
  const acmeChallenge = await acmeChallenges.start();
  stoppers.control('ACME challenge responder', () => acmeChallenges.stop());
  const routerOptions: RouterOptions = {
    listenHost: options.listen,
    port: options.routerPort,
    httpsPort: options.httpsPort,
    trustedProxies: options.trustedProxies,
    workDir: join(options.dataDir, 'router'),
    acmeChallenge,
    onRequest: traffic.onRequest,
  };
  // An adopted router's deaths while no daemon ran are told (and counted) by its start().
  const router = new HaproxyRouter({ ...routerOptions, log, onEngineRestart: () => traffic.metrics.routerRestarted() });
  await router.start();
  stoppers.dataPlane(
    'router',
    () => router.stop(),
    () => router.detach(),
  );
  if (options.metricsListen) {
    const metricsServer = await startMetricsServer(traffic.metrics, options.metricsListen.host, options.metricsListen.port);
    stoppers.control('metrics', () => closeServer(metricsServer.server));
    log(`Prometheus metrics on ${metricsServer.url} (no token: keep this address to the monitoring network)`);
  }
  lifecycle.on('deployment finished', ({ deployment: d }) => {
    // An autoscaling decision's record is in the activity, not a deployment: it has its own counter.
    if (d.finished_at && d.cause !== AUTOSCALING_CAUSE)
      traffic.metrics.deploymentFinished(d.state, (Date.parse(d.finished_at) - Date.parse(d.created_at)) / 1000);
  });
  lifecycle.on('instance restarted', ({ appId }) => traffic.metrics.instanceRestarted(appId));
  lifecycle.on('instance replaced', ({ appId }) => traffic.metrics.instanceReplaced(appId));
  lifecycle.on('app scaled', ({ decision }) => traffic.metrics.appScaled(decision.appId, decision.direction, decision.target));
  // A deleted app's access logs, charts and metrics go with it.
  lifecycle.on('app deleted', ({ appId }) => traffic.forgetApp(appId));
  return { traffic, acmeChallenges, acmeChallenge, router };
}
