/** The reference's drain types, spelled as its CLI spells them. */
export const DRAIN_TYPES = ['TCPSyslog', 'UDPSyslog', 'HTTP', 'ElasticSearch'] as const;
export type DrainType = (typeof DRAIN_TYPES)[number];

/** What a drain carries for one line: the app's log entry and where it came from. */
export interface DrainRecord {
  /** When the line was written (ISO 8601). */
  time: string;
  /** `out`, `err`, `system` or `access`. */
  stream: string;
  line: string;
  app_id: string;
  app: string;
  /** The instance that wrote it, when known; access records name the instance that answered. */
  instance?: string;
  /** The access record's own fields (host, status, duration…), for `access` lines. */
  fields?: Record<string, unknown>;
}

/** What a drain sends with: one batch at a time, resolved once the receiver took it. */
export interface DrainSender {
  send(records: DrainRecord[]): Promise<void>;
  close(): void;
}
