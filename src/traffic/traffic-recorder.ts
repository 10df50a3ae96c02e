import type { PlatformMetrics } from '../metrics/platform-metrics.js';
import type { AccessLog } from './access-log.js';
import type { AccessRecord } from '../router/router.js';
import type { TrafficMinutes } from './traffic-minutes.js';

/**
 * Where the router's `onRequest` goes: each record feeds the app's access log, its per-minute
 * figures and the Prometheus counters, so the three always tell the same story. Called once
 * per request: nothing here waits or throws back into the router.
 */
export class TrafficRecorder {
  constructor(
    readonly accessLog: AccessLog,
    readonly minutes: TrafficMinutes,
    readonly metrics: PlatformMetrics,
    private readonly warn: (line: string) => void = () => {},
  ) {}

  readonly onRequest = (record: AccessRecord): void => {
    try {
      this.accessLog.record(record);
      this.minutes.record(record);
      this.metrics.request(record);
    } catch (error) {
      this.warn(`Could not record a request to ${record.appId}: ${(error as Error).message}`);
    }
  };

  /** A deleted app's log, figures and series go with it. */
  async forgetApp(appId: string): Promise<void> {
    this.minutes.forget(appId);
    this.metrics.forgetApp(appId);
    await this.accessLog.remove(appId);
  }
}
