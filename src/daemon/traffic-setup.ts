import { join } from 'node:path';
import { LogHub } from '../logs/log-hub.js';
import { DEFAULT_LOG_LIMITS } from '../logs/log-limits.js';
import { PlatformMetrics } from '../metrics/platform-metrics.js';
import type { Store } from '../store/store.js';
import { AccessLog, ACCESS_LOG_LIMITS } from '../traffic/access-log.js';
import { TrafficMinutes } from '../traffic/traffic-minutes.js';
import { TrafficRecorder } from '../traffic/traffic-recorder.js';

/**
 * The edge's figures: access logs in `<data>/access-logs` (bounded per app), per-minute
 * figures, and the Prometheus registry, which also reads deployments from the store (the edge
 * stage tells it of each one that finishes).
 */
export function makeTrafficRecorder(options: {
  dataDir: string;
  store: Store;
  log(line: string): void;
  activeConnections(): Promise<number | undefined>;
  appConnections(): Promise<Map<string, number> | undefined>;
  droppedAccessRecords(): Promise<number | undefined>;
}): TrafficRecorder {
  const { dataDir, store, log } = options;
  const hub = new LogHub(join(dataDir, 'access-logs'), { limits: { ...DEFAULT_LOG_LIMITS, app: ACCESS_LOG_LIMITS }, warn: log });
  const metrics = new PlatformMetrics({
    deploymentsByState: () => store.deployments.countByState(),
    activeConnections: options.activeConnections,
    appConnections: options.appConnections,
    droppedAccessRecords: options.droppedAccessRecords,
  });
  return new TrafficRecorder(new AccessLog(hub), new TrafficMinutes(), metrics, log);
}
