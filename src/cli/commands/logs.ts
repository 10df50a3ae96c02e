import { command } from '../command.js';
import { APP_OPTIONS, resolveAppOption } from '../app-options.js';
import { followLog } from '../follow-log.js';
import { DEFAULT_APP_LOG_LINES, parseLines, parseSince, TIME_WINDOW_OPTIONS, windowQuery, type LogWindow } from '../log-window.js';
import { parseUntil, type LogFilter } from '../log-filter.js';
import { UsageError } from '../errors.js';

export const logs = command({
  path: ['logs'],
  summary: `Show the application's output (its last ${DEFAULT_APP_LOG_LINES} lines unless told), or a deployment's log with --deployment-id`,
  usage:
    'logs [--app <app>] [--deployment-id <id>] [--lines|-n <n>] [--since <15m|2h|1d|time>] [--until <time>] [--search <text>] [--follow|--no-follow] [--format human|json]',
  options: {
    ...APP_OPTIONS,
    'deployment-id': {
      type: 'string',
      value: '<id>',
      description: "A deployment's log instead of the application's output (`slipway activity` lists them)",
    },
    lines: {
      type: 'string',
      short: 'n',
      value: '<n>',
      description: `Start with the last n lines (default ${DEFAULT_APP_LOG_LINES} for the output; a deployment's log starts at its beginning)`,
    },
    ...TIME_WINDOW_OPTIONS,
    search: {
      type: 'string',
      value: '<text>',
      description: 'Only lines containing this text (case-sensitive); --lines counts the lines before the search',
    },
    follow: { type: 'boolean', short: 'f', description: 'Keep printing new lines as they come, even when the output is not a terminal' },
    'no-follow': {
      type: 'boolean',
      description: 'Print the lines stored so far and return (the default when the output is not a terminal)',
    },
  },
  args: { min: 0, max: 0 },
  examples: [
    'slipway logs',
    'slipway logs --since 15m --search ERROR --no-follow',
    'slipway logs --deployment-id deployment_0b6f2c0e-5f0c-4c3e-9d8f-1a2b3c4d5e6f',
    'slipway logs -n 50 --format json > last.ndjson',
  ],
  printsData: true,
  async run(ctx, _args, options) {
    const window: LogWindow = {};
    if (options.lines !== undefined) window.lines = parseLines(options.lines);
    if (options.since !== undefined) window.since = parseSince(options.since);
    if (options.follow && options['no-follow']) throw new UsageError('Give --follow or --no-follow, not both.');
    const filter: LogFilter = {};
    if (options.until !== undefined) filter.until = parseUntil(options.until);
    if (options.search !== undefined) filter.search = options.search;
    // Following is the default on a terminal, as with the reference tool; a script or a pipe
    // gets what is stored and returns, unless it asks for --follow.
    const untilPast = filter.until !== undefined && filter.until <= new Date().toISOString();
    const follow = options['no-follow'] || untilPast ? false : options.follow === true || process.stdout.isTTY === true;
    const app = await resolveAppOption(ctx, options);
    const deploymentId = options['deployment-id'];
    // A deployment's log is a story told from its start; an app's output is read from its end.
    if (!deploymentId && window.lines === undefined && window.since === undefined) window.lines = DEFAULT_APP_LOG_LINES;
    const base = deploymentId ? `/v1/apps/${app.id}/deployments/${encodeURIComponent(deploymentId)}/logs` : `/v1/apps/${app.id}/logs`;
    const end = await followLog(ctx, `${base}${windowQuery(window)}`, { follow, filter });
    if (deploymentId && end.state && ctx.format === 'human')
      ctx.err(`Deployment ${deploymentId}: ${end.state}${end.message ? ` (${end.message})` : ''}\n`);
    return deploymentId && end.state && end.state !== 'OK' && end.state !== 'WIP' ? 1 : 0;
  },
});
