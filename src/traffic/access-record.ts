/**
 * One request the router forwarded to an app, as its engine reports it (the router's
 * `onRequest`). Everything the edge shows (access logs, per-minute charts, Prometheus
 * figures) is built from these records.
 */
export interface AccessRecord {
  time: Date;
  appId: string;
  host: string;
  /** The client's address as the router saw it (the TCP peer). */
  client: string;
  method: string;
  path: string;
  status: number;
  /** Response bytes sent to the client. */
  bytes: number;
  durationMs: number;
  /** The upstream that answered, `address:port` (empty when none did). */
  instance: string;
  tls: boolean;
}
