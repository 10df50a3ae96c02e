import type { Store } from '../store/store.js';
import { type FairLimits, fairPick } from '../shared/fair-share.js';
import type { DeliveryRow } from '../store/notification-deliveries.js';
import type { PlatformEvent } from '../core/platform-events.js';
import type { PlatformEvents } from './platform-event-hub.js';
import type { EgressGuard } from '../network/egress-guard.js';
import { wants } from './event-names.js';
import { mailContent, rawPayload, slackPayload } from './payloads.js';
import { signPayload } from './signing.js';
import { type AttemptOutcome, postWebhook } from './webhook-sender.js';
import type { MailSender } from './mail-sender.js';
import { recipientsOf } from './recipients.js';

/** Waits before the 2nd, 3rd… attempt: six attempts over about 12 minutes, then the delivery has failed. */
export const RETRY_DELAYS_MS = [1_000, 5_000, 30_000, 120_000, 600_000];
/**
 * An instance in a crash loop restarts again and again: one crash notice per receiver per
 * minute is enough to send people looking (docs/behaviour.md, Notifications).
 */
const QUIET_MS: Partial<Record<string, number>> = { 'instance.crashed': 60_000 };
/**
 * Deliveries in flight at once, per organisation and over all: a receiver that never answers
 * holds its own organisation's two slots (each for at most the sender's timeout), never
 * another's; organisations take turns for the free slots (docs/security.md).
 */
export const DELIVERY_LIMITS: FairLimits = { perKey: 2, total: 16 };

export interface DispatcherOptions {
  store: Store;
  events: PlatformEvents;
  guard: EgressGuard;
  /** Absent when the operator gave no `--smtp-url`. */
  mail?: MailSender;
  log: (line: string) => void;
  retryDelaysMs?: readonly number[];
  limits?: FairLimits;
}

/**
 * Turns events into deliveries (one per matching webhook or e-mail notification, kept in the
 * store so a daemon restart loses none) and delivers them in the background with bounded
 * retries (docs/behaviour.md, Notifications). The publisher only ever waits for nothing: the
 * subscription defers even the store write.
 */
export class NotificationDispatcher {
  private unsubscribe?: () => void;
  private timer?: NodeJS.Timeout;
  private readonly inFlight = new Map<string, { org: string; work: Promise<void> }>();
  private stopped = false;
  private readonly delays: readonly number[];

  constructor(private readonly options: DispatcherOptions) {
    this.delays = options.retryDelaysMs ?? RETRY_DELAYS_MS;
  }

  start(): void {
    this.unsubscribe = this.options.events.subscribe((event) => {
      setImmediate(() => {
        try {
          this.enqueue(event);
        } catch (error) {
          this.options.log(`Notifications: could not queue ${event.type} for ${event.appId}: ${(error as Error).message}`);
        }
      });
    });
    // Deliveries left pending by the previous daemon go on.
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    // What is in flight ends within the senders' timeouts; unfinished ones stay pending for the next start.
    await Promise.race([
      Promise.allSettled([...this.inFlight.values()].map((f) => f.work)),
      new Promise((r) => setTimeout(r, 2_000).unref()),
    ]);
    this.options.mail?.close();
  }

  private enqueue(event: PlatformEvent): void {
    const { store } = this.options;
    if (!store.apps.byId(event.appId)) return;
    const json = JSON.stringify(event);
    const quiet = QUIET_MS[event.type];
    const since = quiet ? new Date(Date.now() - quiet) : undefined;
    const targets = [
      ...store.webhooks.ofApp(event.appId).map((hook) => ({ events: hook.events, target: { webhookId: hook.id } })),
      ...store.notifyEmails.ofApp(event.appId).map((mail) => ({ events: mail.events, target: { emailId: mail.id } })),
    ];
    for (const { events, target } of targets) {
      if (!wants(events, event.type)) continue;
      if (since && store.notificationDeliveries.sentSince(target, event.type, since)) continue;
      store.notificationDeliveries.enqueue({ appId: event.appId, ...target, eventType: event.type, event: json });
    }
    this.kick();
  }

  /** Starts what is due, then sleeps until the next due delivery. */
  private kick(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    const limits = this.options.limits ?? DELIVERY_LIMITS;
    if (this.inFlight.size < limits.total) {
      const running = new Map<string, number>();
      for (const { org } of this.inFlight.values()) running.set(org, (running.get(org) ?? 0) + 1);
      // A few more than an organisation may start: those in flight are among its oldest.
      const due = this.options.store.notificationDeliveries.dueByOrg(new Date(), limits.perKey * 2).filter((d) => !this.inFlight.has(d.id));
      for (const delivery of fairPick(due, (d) => d.org_id, running, limits)) {
        const work = this.attempt(delivery)
          .catch((error) => this.options.log(`Notifications: delivery ${delivery.id} failed unexpectedly: ${(error as Error).message}`))
          .finally(() => {
            this.inFlight.delete(delivery.id);
            this.kick();
          });
        this.inFlight.set(delivery.id, { org: delivery.org_id, work });
      }
    }
    const next = this.options.store.notificationDeliveries.nextDue();
    const wait = next ? Math.min(60_000, Math.max(100, Date.parse(next) - Date.now())) : 60_000;
    this.timer = setTimeout(() => this.kick(), wait);
    this.timer.unref();
  }

  private async attempt(delivery: DeliveryRow): Promise<void> {
    const { store } = this.options;
    const started = Date.now();
    const outcome = await this.send(delivery);
    const attempts = delivery.attempts + 1;
    const retry = !outcome.ok && !outcome.final && attempts <= this.delays.length;
    store.notificationDeliveries.recordAttempt(
      delivery.id,
      {
        at: new Date(started).toISOString(),
        ok: outcome.ok ? 1 : 0,
        status_code: outcome.statusCode,
        error: outcome.error?.slice(0, 300) ?? null,
        duration_ms: Date.now() - started,
      },
      {
        state: outcome.ok ? 'delivered' : retry ? 'pending' : 'failed',
        nextAttemptAt: retry ? new Date(Date.now() + this.delays[attempts - 1]!).toISOString() : null,
      },
    );
  }

  /** `final`: retrying cannot help (nobody to mail, no SMTP server). */
  private async send(delivery: DeliveryRow): Promise<AttemptOutcome & { final?: boolean }> {
    const { store, guard } = this.options;
    const event = JSON.parse(delivery.event) as PlatformEvent;
    const app = store.apps.byId(delivery.app_id);
    const context = { deliveryId: delivery.id, appName: app?.name ?? delivery.app_id };
    if (delivery.webhook_id) {
      const hook = store.webhooks.byId(delivery.webhook_id);
      if (!hook) return { ok: false, statusCode: null, error: 'the webhook was removed', final: true };
      const body = JSON.stringify(hook.format === 'slack' ? slackPayload(event, context) : rawPayload(event, context));
      const timestamp = Math.floor(Date.now() / 1000);
      return postWebhook(
        hook.url,
        body,
        {
          'user-agent': 'slipway-webhooks',
          'x-slipway-event': event.type,
          'x-slipway-delivery': delivery.id,
          'x-slipway-timestamp': String(timestamp),
          'x-slipway-signature': signPayload(hook.secret, timestamp, body),
        },
        guard,
      );
    }
    const subscription = delivery.email_id ? store.notifyEmails.byId(delivery.email_id) : undefined;
    if (!subscription || !app) return { ok: false, statusCode: null, error: 'the e-mail notification was removed', final: true };
    if (!this.options.mail) {
      return { ok: false, statusCode: null, error: 'this platform has no SMTP server (slipway server --smtp-url)', final: true };
    }
    const to = recipientsOf(store, JSON.parse(subscription.targets) as string[], event, app.org_id);
    if (to.length === 0) {
      return {
        ok: false,
        statusCode: null,
        error: 'nobody to mail: no address given, and no user concerned has one (`slipway notify-email address <address>`)',
        final: true,
      };
    }
    const { subject, text } = mailContent(event, context);
    return this.options.mail.send(to, subject, text);
  }
}
