import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import type { DrainView } from './list.js';

const DRAIN_TYPES = ['TCPSyslog', 'UDPSyslog', 'HTTP', 'ElasticSearch'];

export const drainCreate = command({
  path: ['drain', 'create'],
  summary: "Forward the application's log to a syslog, HTTP or Elasticsearch receiver",
  usage: 'drain create <TCPSyslog|UDPSyslog|HTTP|ElasticSearch> <url> [--username <u> --password <p>] [--with-access-logs] [--app <app>]',
  options: {
    ...APP_OPTIONS,
    username: { type: 'string', value: '<username>', description: 'HTTP basic authentication (HTTP and ElasticSearch drains)' },
    password: { type: 'string', value: '<password>', description: 'HTTP basic authentication (never shown again)' },
    'with-access-logs': { type: 'boolean', description: "Send the router's access records too" },
  },
  args: { min: 2, max: 2 },
  arguments: [
    { name: '<type>', description: 'TCPSyslog, UDPSyslog (RFC 5424), HTTP (NDJSON batches) or ElasticSearch (_bulk)' },
    { name: '<url>', description: 'tcp://host:port, udp://host:port, or http(s)://… (for ElasticSearch, where /_bulk is appended)' },
  ],
  examples: [
    'slipway drain create HTTP https://logs.example.com/in --username shop --password s3cret',
    'slipway drain create TCPSyslog tcp://syslog.example.com:6514 --with-access-logs',
    'slipway drain create ElasticSearch https://es.example.com:9200',
  ],
  printsData: true,
  async run(ctx, [type, url], options) {
    const app = await resolveAppOption(ctx, options);
    // The types as the reference spells them, whatever case was typed.
    const named = DRAIN_TYPES.find((t) => t.toLowerCase() === type.toLowerCase()) ?? type;
    const body: Record<string, unknown> = { type: named, url, with_access_logs: options['with-access-logs'] === true };
    if (options.username !== undefined) body.username = options.username;
    if (options.password !== undefined) body.password = options.password;
    const { drain } = await ctx.client().request<{ drain: DrainView }>('POST', `/v1/apps/${app.id}/drains`, body);
    if (ctx.format === 'json') {
      ctx.out(JSON.stringify(drain, null, 2) + '\n');
      return;
    }
    ctx.out(`${drain.id}\n`);
    ctx.err(`Drain created: ${app.name}'s log${drain.with_access_logs ? ' and access log' : ''} now go to ${drain.url} (${drain.type}).\n`);
  },
});
