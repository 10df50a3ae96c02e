/** What the notification routes answer (src/api/routes/notifications-routes.ts). */
export interface LastDelivery {
  state: 'pending' | 'delivered' | 'failed';
  event: string;
  created_at: string;
}

export interface WebhookView {
  id: string;
  name: string;
  url: string;
  format: 'raw' | 'slack';
  events: string[];
  created_at: string;
  last_delivery: LastDelivery | null;
}

export interface DeliveryView {
  id: string;
  event: string;
  summary: string;
  created_at: string;
  state: 'pending' | 'delivered' | 'failed';
  next_attempt_at: string | null;
  attempts: Array<{ attempt: number; at: string; ok: boolean; status_code: number | null; error: string | null; duration_ms: number }>;
}

export const EVENT_HELP =
  'deployment.started, deployment.succeeded, deployment.failed, deployment.cancelled, instance.crashed, instance.replaced, scaling.up, scaling.down, cron.failed, cron.missed, backup.verification_failed, drain.dropping (or the reference’s DEPLOYMENT_SUCCESS, DEPLOYMENT_FAIL…)';

export function lastDeliveryText(last: LastDelivery | null): string {
  return last ? `${last.state} (${last.event}, ${last.created_at.slice(0, 19).replace('T', ' ')})` : 'none yet';
}

/** One line per attempt: what people look at when a receiver misbehaves. */
export function printDeliveries(out: (text: string) => void, deliveries: DeliveryView[]): void {
  for (const d of deliveries) {
    const next = d.state === 'pending' && d.next_attempt_at ? `, next attempt at ${d.next_attempt_at.slice(11, 19)}` : '';
    out(`${d.created_at.slice(0, 19).replace('T', ' ')}  ${d.event}  ${d.state}${next}  ${d.id}\n`);
    for (const a of d.attempts) {
      const result = a.ok ? `ok${a.status_code ? ` ${a.status_code}` : ''}` : `failed: ${a.error ?? a.status_code}`;
      out(`    attempt ${a.attempt}  ${a.at.slice(11, 19)}  ${result}  (${a.duration_ms} ms)\n`);
    }
  }
}
