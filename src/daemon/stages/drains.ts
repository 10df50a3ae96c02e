import { join } from 'node:path';
import { DrainService } from '../../drains/drain-service.js';
import type { LogHub } from '../../logs/log-hub.js';
import type { EgressGuard } from '../../network/egress-guard.js';
import type { Store } from '../../store/store.js';
import type { TrafficRecorder } from '../../traffic/traffic-recorder.js';
import type { platformEvents } from './events.js';
import type { DaemonBase } from './stage.js';

/**
 * Log drains: every app line (and access record, when asked) waits on disk for its receiver.
 * Needs: `store`, `logs`, `traffic` (the access logs, the drains' figures), `told`, `egress`.
 * Provides: `drains`.
 */
export function drains(
  needs: DaemonBase & {
    store: Store;
    logs: LogHub;
    traffic: TrafficRecorder;
    told: ReturnType<typeof platformEvents>;
    egress: EgressGuard;
  },
) {
  const { options, store, logs, traffic, told, egress, stoppers, lifecycle, log } = needs;
  const drains = new DrainService({
    store,
    dir: join(options.dataDir, 'drains'),
    bufferBytes: options.drainBufferBytes,
    appLogs: logs,
    accessLogs: traffic.accessLog.hub,
    events: told.events,
    forbidden: egress,
    log,
  });
  drains.start();
  stoppers.control('log drains', () => drains.stop());
  traffic.metrics.watchDrains(() => drains.figures());
  // A deleted app's drains send nothing more (a batch in flight is cut), first of all its work;
  // they are taken up again when the deletion stops, and forgotten once it is done.
  lifecycle.on('app ending', ({ appId }) => drains.endApp(appId));
  lifecycle.on('app kept', ({ appId }) => drains.resume(appId));
  lifecycle.on('app deleted', () => drains.sync());
  return { drains };
}
