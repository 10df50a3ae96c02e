/**
 * What happens to an app that people want to be told about (webhooks, e-mail): one list of
 * event names, one shape, and what a room that notices such a thing publishes to. The hub
 * itself is the notifications' (src/notifications/platform-event-hub.ts).
 */

export const PLATFORM_EVENT_TYPES = [
  'deployment.started',
  'deployment.succeeded',
  'deployment.failed',
  'deployment.cancelled',
  'instance.crashed',
  'instance.replaced',
  'scaling.up',
  'scaling.down',
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

/** An event as its publisher gives it: the time is now unless it says otherwise. */
export type NewPlatformEvent = Omit<PlatformEvent, 'at'> & { at?: string };

/**
 * Where a room publishes what it noticed (a cron run failed, a drain drops lines). Publishing
 * never throws and never waits: a slow or failing subscriber must not hold up a deployment, a
 * cron run or a drain.
 */
export interface PlatformEventPublisher {
  publish(event: NewPlatformEvent): void;
}
