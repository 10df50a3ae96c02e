import type { PlatformEvent } from '../core/platform-events.js';

export interface EventContext {
  deliveryId: string;
  appName: string;
}

/** The raw format: the event as a program reads it. */
export function rawPayload(event: PlatformEvent, context: EventContext): Record<string, unknown> {
  return {
    event: event.type,
    delivery_id: context.deliveryId,
    at: event.at,
    app: { id: event.appId, name: context.appName },
    summary: event.summary,
    details: event.details,
  };
}

const FAILING = new Set([
  'deployment.failed',
  'instance.crashed',
  'cron.failed',
  'cron.missed',
  'backup.verification_failed',
  'drain.dropping',
]);

/** Slack's incoming-webhook message. */
export function slackPayload(event: PlatformEvent, context: EventContext): Record<string, unknown> {
  const mark = FAILING.has(event.type)
    ? ':red_circle:'
    : event.type === 'deployment.succeeded'
      ? ':white_check_mark:'
      : ':information_source:';
  return { text: `${mark} *${context.appName}* (${event.type}): ${event.summary}` };
}

/** The mail: a subject naming the app and the event, the summary and the facts. */
export function mailContent(event: PlatformEvent, context: EventContext): { subject: string; text: string } {
  const facts = Object.entries(event.details)
    .filter(([, value]) => value !== null && value !== '')
    .map(([key, value]) => `  ${key}: ${value}`);
  return {
    subject: `[slipway] ${context.appName}: ${event.type}`,
    text: [
      event.summary,
      '',
      `Event: ${event.type}`,
      `At: ${event.at}`,
      `Application: ${context.appName} (${event.appId})`,
      ...(facts.length ? ['', ...facts] : []),
      '',
    ].join('\n'),
  };
}
