import type { SupervisionEvents } from './server-supervisor.js';

/**
 * The add-on provider contract. A provider owns the servers behind one kind of add-on
 * (PostgreSQL, Redis...) on this machine and turns an add-on record into credentials.
 *
 * The store keeps each add-on's `config` (the provider's private bookkeeping, secrets
 * included); the provider never keeps state the store does not have, so a daemon restart
 * only needs `start()` followed by `resume()` for every stored add-on.
 */

export interface AddonRecord {
  /** The store's id of the add-on; stable for its whole life. */
  id: string;
  /** The name a user gave it; informative only, never used in paths or SQL. */
  name: string;
  /** The plan asked for at creation, checked by the API (an FS bucket's is its size); absent: the default. */
  plan?: string;
  /** An FS bucket mounted by one instance at a time (an exclusive volume); the other providers refuse it. */
  exclusive?: boolean;
}

export interface ProvisionResult {
  /** What the store must keep for this add-on and hand back to env/resume/deprovision. */
  config: Record<string, string>;
}

export interface AddonProvider {
  /** The name users type: `slipway addon create <name> ...`. */
  readonly name: string;
  /** One line for `slipway addon providers`. */
  readonly description: string;
  /** What one add-on may use under the provider's plan, one line (plan-limits.ts). */
  readonly limits?: string;
  /** Brings up shared servers (idempotent); call once at daemon start, before resume(). */
  start(): Promise<void>;
  /** Creates the resources of a new add-on and returns what to store. */
  provision(addon: AddonRecord): Promise<ProvisionResult>;
  /** The variables an application linked to the add-on receives. Pure: no I/O. */
  env(config: Record<string, string>): Record<string, string>;
  /** Brings an existing add-on back after a daemon start (e.g. restarts its process). */
  resume(addon: Pick<AddonRecord, 'id'>, config: Record<string, string>): Promise<void>;
  /** Destroys the add-on's resources and data. Idempotent: already gone is not an error. */
  deprovision(addon: Pick<AddonRecord, 'id'>, config: Record<string, string>): Promise<void>;
  /** Stops every server this provider runs (`slipway system stop`); data is kept. */
  stop(): Promise<void>;
  /**
   * The daemon lets go (SIGTERM, an upgrade): its servers run on unwatched, and the next
   * daemon's start() and resume() adopt them without a restart.
   */
  detach(): Promise<void>;
  /** Size used against size, for the add-ons whose size is a filesystem's (FS buckets); reads nothing inside. */
  use?(addonId: string, config: Record<string, string>): { usedBytes: number; sizeBytes: number } | undefined;
  /** Who hears of its servers' restarts after a crash (the daemon's log, metrics, app logs). */
  superviseWith(events: SupervisionEvents): void;
}
