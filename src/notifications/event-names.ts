import { PLATFORM_EVENT_TYPES, type PlatformEventType } from '../core/platform-events.js';
import { ValidationError } from '../core/errors.js';

/** The reference's event names a team may keep in its scripts, and what they mean here. */
const REFERENCE_NAMES: Record<string, PlatformEventType> = {
  DEPLOYMENT_ACTION_BEGIN: 'deployment.started',
  DEPLOYMENT_SUCCESS: 'deployment.succeeded',
  DEPLOYMENT_FAIL: 'deployment.failed',
  DEPLOYMENT_CANCELLED: 'deployment.cancelled',
};

/** `--event` values: slipway's names or the reference's; none given means every event. */
export function checkEventNames(values: unknown): PlatformEventType[] {
  if (values === undefined) return [];
  if (!Array.isArray(values)) throw new ValidationError('events must be a list of event names.');
  const names = values.map((value) => {
    const known = typeof value === 'string' ? (REFERENCE_NAMES[value] ?? value) : value;
    if (!(PLATFORM_EVENT_TYPES as readonly unknown[]).includes(known)) {
      throw new ValidationError(`Unknown event ${JSON.stringify(value)}.`, `Events: ${PLATFORM_EVENT_TYPES.join(', ')}.`);
    }
    return known as PlatformEventType;
  });
  return [...new Set(names)];
}

/** Whether a subscription to `events` (JSON array; empty: all) wants `type`. */
export function wants(events: string, type: string): boolean {
  const list = JSON.parse(events) as string[];
  return list.length === 0 || list.includes(type);
}
