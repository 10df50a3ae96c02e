import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AccessRecord } from '../router/router.js';

export interface PlatformMetricsSources {
  /** Deployments stored, by state (WIP, OK, FAIL, CANCELLED), read at each scrape. */
  deploymentsByState?(): Record<string, number>;
  /** Client connections the router holds open now; absent when the engine cannot tell. */
  activeConnections?(): number | undefined | Promise<number | undefined>;
  /** Connections each app's instances serve through the router now, by app id; absent when the engine cannot tell. */
  appConnections?(): Map<string, number> | undefined | Promise<Map<string, number> | undefined>;
  /** Access records the router dropped since it started (never decreasing); absent when the engine cannot tell. */
  droppedAccessRecords?(): number | undefined | Promise<number | undefined>;
}

/** Seconds: from a static file answered at once to a request the app thinks about for a minute. */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds: a restart of a warm release to a cold sbt build. */
const DEPLOYMENT_BUCKETS = [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800];

/**
 * The daemon's Prometheus figures (prom-client, a registry of its own): the edge's requests
 * by app and status with their durations and the router's open connections, deployments by
 * state and duration, build durations, instance crash restarts and the router's restarts,
 * plus the daemon process's own (CPU, memory, event loop) under `slipway_daemon_`. Apps are labelled by id, which never
 * changes; a deleted app's series are removed with it.
 */
export class PlatformMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'app' | 'status'>;
  private readonly requestDuration: Histogram<'app'>;
  private readonly deploymentDuration: Histogram<'state'>;
  private readonly buildDuration: Histogram<'outcome'>;
  private readonly restarts: Counter<'app'>;
  private readonly routerRestarts: Counter;
  private readonly replacements: Counter<'app'>;
  private readonly scalingDecisions: Counter<'app' | 'direction'>;
  private readonly workerScalingDecisions: Counter<'app' | 'direction'>;
  private readonly addonServerRestarts: Counter<'provider'>;
  private readonly backupVerifications: Counter<'provider' | 'result'>;
  /** Statuses seen per app, to remove an app's request series when it is deleted. */
  private readonly statusesOf = new Map<string, Set<string>>();

  constructor(sources: PlatformMetricsSources = {}) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'slipway_http_requests_total',
      help: 'Requests the router forwarded to each app, by answer status',
      labelNames: ['app', 'status'],
      registers,
    });
    this.requestDuration = new Histogram({
      name: 'slipway_http_request_duration_seconds',
      help: 'Time from the request reaching the router to the end of the answer, per app',
      labelNames: ['app'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'slipway_router_active_connections',
      help: 'Client connections the router holds open',
      registers,
      async collect() {
        const open = await sources.activeConnections?.();
        if (open === undefined) this.reset();
        else this.set(open);
      },
    });
    new Gauge({
      name: 'slipway_router_app_connections',
      help: "Connections the router has open to each app's instances, by app (HAProxy: the sessions its backend serves)",
      labelNames: ['app'],
      registers,
      async collect() {
        const byApp = await sources.appConnections?.();
        // Read whole at each scrape: an app no longer routed has no series.
        this.reset();
        for (const [app, open] of byApp ?? []) this.set({ app }, open);
      },
    });
    let droppedSeen = 0;
    new Counter({
      name: 'slipway_router_access_records_dropped_total',
      help: 'Access records the router dropped because the daemon did not read them in time (missing from access logs and the figures above)',
      registers,
      async collect() {
        const dropped = await sources.droppedAccessRecords?.();
        if (dropped !== undefined && dropped > droppedSeen) {
          this.inc(dropped - droppedSeen);
          droppedSeen = dropped;
        }
      },
    });
    new Gauge({
      name: 'slipway_deployments',
      help: 'Deployments stored, by state (WIP: in progress)',
      labelNames: ['state'],
      registers,
      collect() {
        if (!sources.deploymentsByState) return;
        const counts = sources.deploymentsByState();
        for (const state of ['WIP', 'OK', 'FAIL', 'CANCELLED']) this.set({ state }, counts[state] ?? 0);
      },
    });
    this.deploymentDuration = new Histogram({
      name: 'slipway_deployment_duration_seconds',
      help: 'Duration of finished deployments, queued time included, by final state',
      labelNames: ['state'],
      buckets: DEPLOYMENT_BUCKETS,
      registers,
    });
    this.buildDuration = new Histogram({
      name: 'slipway_build_duration_seconds',
      help: 'Duration of the build phase (toolchain, install, build commands), by outcome',
      labelNames: ['outcome'],
      buckets: DEPLOYMENT_BUCKETS,
      registers,
    });
    this.restarts = new Counter({
      name: 'slipway_instance_restarts_total',
      help: 'Automatic restarts of crashed instances, per app',
      labelNames: ['app'],
      registers,
    });
    this.addonServerRestarts = new Counter({
      name: 'slipway_addon_server_restarts_total',
      help: 'Restarts of add-on servers (PostgreSQL, Redis) that died while the daemon ran, by provider',
      labelNames: ['provider'],
      registers,
    });
    this.backupVerifications = new Counter({
      name: 'slipway_backup_verifications_total',
      help: 'Restore tests of add-on backups, by provider and result (verified, failed)',
      labelNames: ['provider', 'result'],
      registers,
    });
    this.replacements = new Counter({
      name: 'slipway_instance_replacements_total',
      help: 'Instances replaced because they stopped answering their health check while serving (liveness), per app',
      labelNames: ['app'],
      registers,
    });
    this.scalingDecisions = new Counter({
      name: 'slipway_autoscaling_decisions_total',
      help: "The autoscaler's changes of an app's instance count, per app and direction (up, down)",
      labelNames: ['app', 'direction'],
      registers,
    });
    this.workerScalingDecisions = new Counter({
      name: 'slipway_autoscaling_worker_decisions_total',
      help: "The autoscaler's changes of an app's worker instance count (a range of workers of its own), per app and direction (up, down)",
      labelNames: ['app', 'direction'],
      registers,
    });
    this.routerRestarts = new Counter({
      name: 'slipway_router_restarts_total',
      help: "Deaths of the router's engine (HAProxy) that its supervisor started it again after; those while no daemon ran are counted at the next start",
      registers,
    });
    collectDefaultMetrics({ register: this.registry, prefix: 'slipway_daemon_' });
  }

  request(record: AccessRecord): void {
    const status = String(record.status);
    let statuses = this.statusesOf.get(record.appId);
    if (!statuses) this.statusesOf.set(record.appId, (statuses = new Set()));
    statuses.add(status);
    this.requests.inc({ app: record.appId, status });
    this.requestDuration.observe({ app: record.appId }, Math.max(0, record.durationMs) / 1000);
  }

  deploymentFinished(state: string, seconds: number): void {
    this.deploymentDuration.observe({ state }, Math.max(0, seconds));
  }

  buildFinished(outcome: 'success' | 'failure', seconds: number): void {
    this.buildDuration.observe({ outcome }, Math.max(0, seconds));
  }

  instanceRestarted(appId: string): void {
    this.restarts.inc({ app: appId });
  }

  addonServerRestarted(provider: string): void {
    this.addonServerRestarts.inc({ provider });
  }

  /** Shows a provider's restart count (0) before its first restart, so rates and alerts see the series. */
  addonProviderWatched(provider: string): void {
    this.addonServerRestarts.inc({ provider }, 0);
  }

  backupVerified(provider: string, result: 'verified' | 'failed'): void {
    this.backupVerifications.inc({ provider, result });
  }

  /** Both series exist (0) from the start, so an alert on failures sees the series before the first one. */
  backupProviderWatched(provider: string): void {
    for (const result of ['verified', 'failed'] as const) this.backupVerifications.inc({ provider, result }, 0);
  }

  instanceReplaced(appId: string): void {
    this.replacements.inc({ app: appId });
  }

  appScaled(appId: string, direction: 'up' | 'down', target: 'instances' | 'workers' = 'instances'): void {
    (target === 'workers' ? this.workerScalingDecisions : this.scalingDecisions).inc({ app: appId, direction });
  }

  /**
   * Log drains' figures, read at each scrape: lines waiting for the receiver, the oldest one's
   * age, and lines dropped because a drain's buffer was full. Labelled by app and drain id.
   */
  watchDrains(
    figures: () => Array<{ app: string; drain: string; status: { waiting: number; lag_seconds: number; dropped: number } }>,
  ): void {
    const registers = [this.registry];
    const gauge = (name: string, help: string, pick: (s: { waiting: number; lag_seconds: number; dropped: number }) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['app', 'drain'],
        registers,
        collect() {
          // Read whole at each scrape: a removed drain has no series.
          this.reset();
          for (const f of figures()) this.set({ app: f.app, drain: f.drain }, pick(f.status));
        },
      });
    gauge('slipway_drain_lag_seconds', 'Age of the oldest line a log drain has not delivered yet (0: none waits)', (s) => s.lag_seconds);
    gauge('slipway_drain_waiting_lines', 'Lines waiting in a log drain’s disk buffer for its receiver', (s) => s.waiting);
    gauge(
      'slipway_drain_dropped_lines',
      'Lines a log drain dropped, oldest first, because its buffer was full (since it was created)',
      (s) => s.dropped,
    );
  }

  /**
   * The free bytes of the disks the platform writes to (the data folder's, a local backup
   * folder's), labelled by folder, and the reserve builds and backups leave on them.
   */
  watchDiskReserve(reserve: { minFree: number; free(): Promise<Array<{ path: string; free: number | null }>> }): void {
    const registers = [this.registry];
    new Gauge({
      name: 'slipway_disk_free_bytes',
      help: 'Bytes free on the filesystem of the data folder (and of a local backup folder), by folder',
      labelNames: ['path'],
      registers,
      async collect() {
        this.reset();
        for (const d of await reserve.free()) if (d.free !== null) this.set({ path: d.path }, d.free);
      },
    });
    new Gauge({
      name: 'slipway_disk_reserve_bytes',
      help: 'Free space builds and backups leave on those filesystems (--min-free-disk); below it they are refused',
      registers,
      collect() {
        this.set(reserve.minFree);
      },
    });
  }

  /**
   * Each app's disk use and budget (its own filesystem), read at each scrape, labelled by app id.
   * An app whose filesystem is not made yet (no push) has a budget and no use.
   */
  watchAppDisks(figures: () => Promise<Array<{ app: string; usedBytes: number | null; budgetBytes: number }>>): void {
    const registers = [this.registry];
    new Gauge({
      name: 'slipway_app_disk_used_bytes',
      help: "Bytes used in each app's own filesystem: its repository, build, caches and kept releases",
      labelNames: ['app'],
      registers,
      async collect() {
        this.reset();
        for (const f of await figures()) if (f.usedBytes !== null) this.set({ app: f.app }, f.usedBytes);
      },
    });
    new Gauge({
      name: 'slipway_app_disk_budget_bytes',
      help: "Each app's disk budget (`slipway scale --disk`, else the daemon's --app-disk-budget)",
      labelNames: ['app'],
      registers,
      async collect() {
        this.reset();
        for (const f of await figures()) this.set({ app: f.app }, f.budgetBytes);
      },
    });
  }

  routerRestarted(): void {
    this.routerRestarts.inc();
  }

  forgetApp(appId: string): void {
    for (const status of this.statusesOf.get(appId) ?? []) this.requests.remove({ app: appId, status });
    this.statusesOf.delete(appId);
    this.requestDuration.remove({ app: appId });
    this.restarts.remove({ app: appId });
    this.replacements.remove({ app: appId });
    for (const direction of ['up', 'down']) {
      this.scalingDecisions.remove({ app: appId, direction });
      this.workerScalingDecisions.remove({ app: appId, direction });
    }
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
