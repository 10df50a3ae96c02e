import type { Store } from '../store/store.js';
import type { InstanceBackend } from '../instances/backend.js';
import type { Router } from '../router/router.js';
import type { LogHub } from '../logs/log-hub.js';
import type { SandboxPolicy } from '../sandbox/sandbox-identity.js';
import type { Provider } from '../providers/plan.js';
import type { RequestHolds } from './exclusive-handover.js';
import type { SleepHolds } from './instance-scaling.js';

/** What the serving room needs from the daemon: the parts it drives and the app's settings it reads. */
export interface AppRuntimeOptions {
  store: Store;
  backend: InstanceBackend;
  sandboxes: SandboxPolicy;
  router: Router;
  logs: LogHub;
  domain: string;
  /** Where instances see the host (add-ons, the router's source address). */
  gatewayAddress: string;
  /** The operator's `--trusted-proxy` ranges, told to the app in CC_REVERSE_PROXY_IPS. */
  trustedProxies?: readonly string[];
  /** Every variable an app receives: its own, its add-ons', its linked apps'. */
  appEnv(appId: string): Record<string, string>;
  /** The runtimes, for what a release's processes get from their sandbox's memory. */
  providers?: ReadonlyMap<string, Provider>;
  log(line: string): void;
  /** How long a new instance may take to answer its first request. */
  bootDeadlineMs?: number;
  /** Pause between switching the router and stopping the old instance. */
  drainDelayMs?: number;
  /** How long a path that answered may take to turn 200 (the health check's warm-up window). */
  healthCheckSettleMs?: number;
  /** Told each time a crashed instance of an app is restarted by its supervisor. */
  onInstanceRestart?(appId: string): void;
  /** Whether the app has an exclusive volume: its switches hand the volume over (exclusive-handover.ts). */
  hasExclusiveVolume?(appId: string): boolean;
  /** The router's holds of an app's requests, for those handovers. */
  holds?: RequestHolds;
  /** The router's holds of a sleeping app's requests (scale to zero); absent: apps never sleep. */
  sleepHolds?: SleepHolds;
}
