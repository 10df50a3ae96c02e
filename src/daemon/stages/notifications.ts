import type { EgressGuard } from '../../network/egress-guard.js';
import type { Store } from '../../store/store.js';
import { startNotifications } from '../notifications-setup.js';
import type { platformEvents } from '../platform-events-setup.js';
import type { DaemonBase } from './stage.js';

/**
 * Webhooks and e-mail about the apps' events. Needs: `store`, `told`, `egress`. Provides:
 * `notifications` (the dispatcher, and whether mail goes out).
 */
export async function notifications(needs: DaemonBase & { store: Store; told: ReturnType<typeof platformEvents>; egress: EgressGuard }) {
  const { options, store, told, egress, stoppers, log } = needs;
  const notifications = await startNotifications({ store, events: told.events, guard: egress, smtp: options.smtp, log });
  stoppers.control('notifications', () => notifications.dispatcher.stop());
  return { notifications };
}
