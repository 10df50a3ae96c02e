import { command } from '../command.js';
import { APP_OPTIONS, resolveAppOption } from '../app-options.js';
import { followLog, type LogLine } from '../follow-log.js';
import { parseLines, parseSince, TIME_WINDOW_OPTIONS, windowQuery, type LogWindow } from '../log-window.js';
import { parseUntil, type LogFilter } from '../log-filter.js';
import { UsageError } from '../errors.js';

/** Requests shown when neither --lines nor --since is given. */
export const DEFAULT_ACCESS_LOG_LINES = 100;

/** A request target or client address is whatever a client sent: nothing of it may drive the terminal. */
function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

export const accesslogs = command({
  path: ['accesslogs'],
  summary: `Show the requests the router forwarded to the application (the last ${DEFAULT_ACCESS_LOG_LINES} unless told): time, client, method, path, status, bytes, duration, instance`,
  usage:
    'accesslogs [--app <app>] [--lines|-n <n>] [--since <15m|2h|1d|time>] [--until <time>] [--follow|--no-follow] [--format human|json]',
  options: {
    ...APP_OPTIONS,
    lines: {
      type: 'string',
      short: 'n',
      value: '<n>',
      description: `Start with the last n requests (default ${DEFAULT_ACCESS_LOG_LINES})`,
    },
    ...TIME_WINDOW_OPTIONS,
    follow: { type: 'boolean', short: 'f', description: 'Keep printing requests as they come, even when the output is not a terminal' },
    'no-follow': {
      type: 'boolean',
      description: 'Print the requests stored so far and return (the default when the output is not a terminal)',
    },
  },
  args: { min: 0, max: 0 },
  examples: [
    'slipway accesslogs --follow',
    'slipway accesslogs --since 1h --no-follow',
    'slipway accesslogs -n 1000 --format json > requests.ndjson',
  ],
  printsData: true,
  async run(ctx, _args, options) {
    const window: LogWindow = {};
    if (options.lines !== undefined) window.lines = parseLines(options.lines);
    if (options.since !== undefined) window.since = parseSince(options.since);
    if (window.lines === undefined && window.since === undefined) window.lines = DEFAULT_ACCESS_LOG_LINES;
    if (options.follow && options['no-follow']) throw new UsageError('Give --follow or --no-follow, not both.');
    const filter: LogFilter = {};
    if (options.until !== undefined) filter.until = parseUntil(options.until);
    // As `slipway logs`: a terminal follows unless told, a script or a pipe gets what is stored.
    const untilPast = filter.until !== undefined && filter.until <= new Date().toISOString();
    const follow = options['no-follow'] || untilPast ? false : options.follow === true || process.stdout.isTTY === true;
    const app = await resolveAppOption(ctx, options);
    const print = (entry: LogLine) =>
      ctx.format === 'json' ? ctx.out(`${JSON.stringify(entry)}\n`) : ctx.out(`${entry.time ?? ''} ${printable(entry.line ?? '')}\n`);
    await followLog(ctx, `/v1/apps/${app.id}/accesslogs${windowQuery(window)}`, { follow, filter, print });
    return 0;
  },
});
