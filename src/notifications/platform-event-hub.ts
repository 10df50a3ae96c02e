import type { NewPlatformEvent, PlatformEvent, PlatformEventPublisher } from '../core/platform-events.js';

export type PlatformEventListener = (event: PlatformEvent) => void;

/**
 * The hub of the platform's events (core/platform-events.ts): the rooms that notice things
 * publish to it, the notifications subscribe. A subscriber's failure never reaches the publisher.
 */
export class PlatformEvents implements PlatformEventPublisher {
  private readonly listeners = new Set<PlatformEventListener>();

  /** Returns the function that unsubscribes. */
  subscribe(listener: PlatformEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  publish(event: NewPlatformEvent): void {
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
