/**
 * What happens to an app that people want to be told about (webhooks, e-mail): one list of
 * event names, one shape, and a small hub the rooms that notice things publish to and the
 * notifications subscribe to. Publishing never throws and never waits: a slow or failing
 * subscriber must not hold up a deployment, a cron run or a drain.
 */

export const PLATFORM_EVENT_TYPES = [
  'deployment.started',
  'deployment.succeeded',
  'deployment.failed',
  'deployment.cancelled',
  'instance.crashed',
  'instance.replaced',
  'cron.failed',
  'cron.missed',
  'backup.verification_failed',
  'drain.dropping',
] as const;

export type PlatformEventType = (typeof PLATFORM_EVENT_TYPES)[number];

export interface PlatformEvent {
  type: PlatformEventType;
  appId: string;
  /** When it happened (ISO 8601). */
  at: string;
  /** One sentence a person reads: "Deployment deployment_… of shop failed in the build phase: …". */
  summary: string;
  /** Facts a program reads (ids, exit codes, counts); no secrets. */
  details: Record<string, string | number | boolean | null>;
}

export type PlatformEventListener = (event: PlatformEvent) => void;

export class PlatformEvents {
  private readonly listeners = new Set<PlatformEventListener>();

  /** Returns the function that unsubscribes. */
  subscribe(listener: PlatformEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  publish(event: Omit<PlatformEvent, 'at'> & { at?: string }): void {
    const full: PlatformEvent = { ...event, at: event.at ?? new Date().toISOString() };
    for (const listener of this.listeners) {
      try {
        listener(full);
      } catch {
        // A subscriber's failure is its own to report; the publisher goes on.
      }
    }
  }
}
