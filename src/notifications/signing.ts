import { createHmac, randomBytes } from 'node:crypto';

/** A new webhook secret, shown once. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/**
 * The signature of a payload (docs/behaviour.md, Notifications): HMAC-SHA256 with the webhook's
 * secret over `<timestamp>.<body>`, so a receiver can refuse a replayed old payload as well as a
 * forged one. Sent as `X-Slipway-Signature: sha256=<hex>` beside `X-Slipway-Timestamp`.
 */
export function signPayload(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}
