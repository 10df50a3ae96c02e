/**
 * The router contract: the platform owns the routing table, the engine only forwards.
 * Host -> upstreams; an empty upstream list means the app exists but has no running
 * instance (503); a host absent from the table is unknown (404).
 */
export interface Upstream {
  address: string;
  port: number;
}

export type RoutingTable = ReadonlyMap<string, readonly Upstream[]>;

export interface Router {
  start(): Promise<void>;
  /** Applies a whole table; requests in flight on removed upstreams finish (drain). */
  apply(table: RoutingTable): Promise<void>;
  stop(): Promise<void>;
}
