import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import { EVENT_HELP, type WebhookView } from './types.js';

export const webhooksAdd = command({
  path: ['webhooks', 'add'],
  summary: "Send the application's events to a URL as JSON signed with HMAC-SHA256 (the secret is shown once)",
  usage: 'webhooks add <name> <url> [--format raw|slack] [--event <event>]... [--app <app>]',
  options: {
    ...APP_OPTIONS,
    format: {
      type: 'string',
      value: '<raw|slack>',
      choices: ['raw', 'slack'],
      description: 'The payload: raw (slipway\'s JSON, default) or slack (Slack\'s incoming-webhook {"text": …})',
    },
    event: {
      type: 'string',
      multiple: true,
      value: '<event>',
      description: `An event to send (repeat; default every event): ${EVENT_HELP}`,
    },
  },
  args: { min: 2, max: 2 },
  arguments: [
    { name: '<name>', description: 'A name for it: lower-case letters, digits and -' },
    { name: '<url>', description: 'The receiver, http:// or https://' },
  ],
  examples: [
    'slipway webhooks add ci https://ci.example.com/hooks/slipway',
    'slipway webhooks add team https://hooks.slack.com/services/T0/B0/XX --format slack --event deployment.failed --event instance.crashed',
  ],
  async run(ctx, [name, url], options) {
    const app = await resolveAppOption(ctx, options);
    const format = options.format;
    if (format !== undefined && format !== 'raw' && format !== 'slack') {
      ctx.err(`Error: --format must be raw or slack, not ${JSON.stringify(format)}.\n`);
      return 2;
    }
    const events = options.event;
    const { webhook, secret } = await ctx
      .client()
      .request<{ webhook: WebhookView; secret: string }>('POST', `/v1/apps/${app.id}/webhooks`, {
        name,
        url,
        ...(format ? { format } : {}),
        ...(events ? { events } : {}),
      });
    ctx.err(
      `Webhook ${webhook.name} of ${app.name} sends ${webhook.events.length ? webhook.events.join(', ') : 'every event'} to ${webhook.url}.\n`,
    );
    ctx.err('Its signing secret, shown this once (X-Slipway-Signature is sha256=HMAC-SHA256(secret, "<X-Slipway-Timestamp>.<body>")):\n');
    ctx.out(`${secret}\n`);
  },
});
