import type { Store } from '../../store/store.js';
import { platformEvents } from '../platform-events-setup.js';

/**
 * What people are told about (webhooks, e-mail): deployments, instances, cron runs, drains.
 * Needs: `store`. Provides: `told`, the event hub and what the store and the pipeline tell it.
 */
export function events({ store }: { store: Store }) {
  return { told: platformEvents(store) };
}
