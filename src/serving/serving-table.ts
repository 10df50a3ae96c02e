import type { Store } from '../store/store.js';
import type { Instance } from '../instances/backend.js';
import type { Router, RoutingTable } from '../router/router.js';
import { buildRoutingTable } from '../domains/routing-table.js';

export interface ServingTableOptions {
  store: Store;
  router: Router;
  domain: string;
  log(line: string): void;
  /** Pause between switching the router and stopping the old instance. */
  drainDelayMs?: number;
}

/**
 * The instances serving each app, by instance number, and the router's table made from them:
 * what AppRuntime keeps, and what the liveness monitor and the restore at a daemon start act on
 * (through the narrow views below). Old instances drain here after they left the table.
 */
export class ServingTable {
  private readonly serving = new Map<string, Instance[]>();
  /** Serving instances out of the routing table because they stopped answering, until replaced. */
  private readonly withdrawn = new WeakSet<Instance>();
  /** Old instances draining after a switch or a replacement, and the app of each: shutdown and an app's deletion wait for them. */
  private readonly draining = new Map<Promise<void>, string>();
  private readonly routesListeners = new Set<() => void>();
  private routesPending: Promise<void> | undefined;
  /** Whether restore took the routes over: before, the router's table is the previous daemon's. */
  private restored = false;

  constructor(private readonly o: ServingTableOptions) {}

  of(appId: string): Instance[] {
    return this.serving.get(appId) ?? [];
  }

  /** Whether the app is in the table (it may serve no instance at the moment). */
  has(appId: string): boolean {
    return this.serving.has(appId);
  }

  serve(appId: string, instances: Instance[]): void {
    this.serving.set(appId, instances);
  }

  /** Takes the app out of the table (not the router's yet) and returns what served it. */
  forget(appId: string): Instance[] {
    const instances = this.of(appId);
    this.serving.delete(appId);
    return instances;
  }

  /** Every app's serving instances now, adopted ones included. */
  servingInstances(): Iterable<readonly [string, readonly Instance[]]> {
    return [...this.serving.entries()];
  }

  /** Takes a serving instance out of the routing table at once; it keeps running. */
  async withdraw(appId: string, instance: Instance): Promise<void> {
    if (!this.of(appId).includes(instance)) return;
    this.withdrawn.add(instance);
    await this.applyRoutes();
  }

  routingTable(): RoutingTable {
    return buildRoutingTable(this.o.store, this.o.domain, (appId) =>
      this.of(appId)
        .filter((i) => i.state() === 'running' && !this.withdrawn.has(i))
        .map((i) => ({ address: i.address, port: i.port })),
    );
  }

  /** Called after each routing table applied (the certificates follow the hosts). */
  onRoutesApplied(listener: () => void): void {
    this.routesListeners.add(listener);
  }

  async applyRoutes(): Promise<void> {
    // Until restore has adopted what runs, the router keeps the table the last daemon gave it:
    // a table from this daemon's empty view would take every app out of it.
    if (!this.restored) return;
    await this.o.router.apply(this.routingTable());
    for (const listener of this.routesListeners) listener();
  }

  /** Lets the router take this daemon's table from now on, and applies it. */
  async takeOverRoutes(): Promise<void> {
    this.restored = true;
    await this.applyRoutes();
  }

  /** A serving instance's routes follow its health: leaving the table when it crashes, back when it runs. */
  followState(appId: string, instanceId: string): void {
    if (!this.of(appId).some((i) => i.id === instanceId)) return;
    this.routesPending ??= Promise.resolve().then(async () => {
      this.routesPending = undefined;
      await this.applyRoutes().catch((e) => this.o.log(`Routing after a state change of ${appId}: ${(e as Error).message}`));
    });
  }

  /** Old instances out of the table: the router's workers finish requests in flight, then they stop. */
  drainInBackground(appId: string, instances: Instance[]): void {
    if (instances.length === 0) return;
    const drain = (async () => {
      await new Promise((resolve) => setTimeout(resolve, this.o.drainDelayMs ?? 2000));
      await Promise.all(instances.map((i) => i.stop(10_000)));
    })().catch((error) => this.o.log(`Stopping a previous instance of ${appId}: ${(error as Error).message}`));
    this.stopping(appId, drain);
  }

  /** Keeps an instance of the app being stopped until it stopped, for shutdown and the app's deletion. */
  stopping(appId: string, stop: Promise<void>): void {
    this.draining.set(stop, appId);
    void stop.finally(() => this.draining.delete(stop));
  }

  /** Resolves once every instance replaced by a switch has stopped. */
  async drained(appId?: string): Promise<void> {
    await Promise.all([...this.draining].filter(([, app]) => appId === undefined || app === appId).map(([drain]) => drain));
  }

  clear(): void {
    this.serving.clear();
  }
}
