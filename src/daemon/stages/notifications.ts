import type { Store } from '../../store/store.js';
import type { PlatformEvents } from '../../notifications/platform-event-hub.js';
import type { EgressGuard } from '../../network/egress-guard.js';
import { NotificationDispatcher } from '../../notifications/dispatcher.js';
import { MailSender } from '../../notifications/mail-sender.js';
import { checkSmtpUrl } from '../../notifications/notification-urls.js';
import type { platformEvents } from './events.js';
import type { DaemonBase } from './stage.js';

/**
 * Webhooks and e-mail about the apps' events (docs/behaviour.md, Notifications). The SMTP URL
 * is checked here, at start, like a webhook's URL is when it is added: a wrong one stops the
 * daemon with the reason rather than failing every mail later.
 */
export async function startNotifications(input: {
  store: Store;
  events: PlatformEvents;
  guard: EgressGuard;
  smtp?: { url: string; from: string };
  log: (line: string) => void;
}): Promise<{ dispatcher: NotificationDispatcher; smtp: boolean }> {
  let mail: MailSender | undefined;
  if (input.smtp) {
    let url: URL;
    try {
      url = await checkSmtpUrl(input.smtp.url, input.guard);
    } catch (error) {
      throw new Error((error as Error).message);
    }
    mail = new MailSender({ url, from: input.smtp.from, guard: input.guard });
    input.log(`Notification mail goes through ${url.protocol}//${url.host} from ${input.smtp.from}`);
  }
  const dispatcher = new NotificationDispatcher({ store: input.store, events: input.events, guard: input.guard, mail, log: input.log });
  dispatcher.start();
  return { dispatcher, smtp: mail !== undefined };
}

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
