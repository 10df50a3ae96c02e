import type { Command } from '../command.js';
import { resolveApp } from '../resolve-app.js';
import { followLog } from '../follow-log.js';
import { DEFAULT_APP_LOG_LINES, parseLines, parseSince, windowQuery, type LogWindow } from '../log-window.js';

export const logs: Command = {
  path: ['logs'],
  summary: `Show the application's output (its last ${DEFAULT_APP_LOG_LINES} lines unless told), or a deployment's log with --deployment-id`,
  usage: 'logs [--app <app>] [--deployment-id <id>] [--lines|-n <n>] [--since <15m|2h|1d|time>] [--follow] [--format human|json]',
  options: {
    app: { type: 'string' },
    'deployment-id': { type: 'string' },
    lines: { type: 'string', short: 'n' },
    since: { type: 'string' },
    follow: { type: 'boolean', short: 'f' },
  },
  args: { min: 0, max: 0 },
  printsData: true,
  async run(ctx, _args, options) {
    const window: LogWindow = {};
    if (options.lines !== undefined) window.lines = parseLines(options.lines as string);
    if (options.since !== undefined) window.since = parseSince(options.since as string);
    const app = await resolveApp(ctx, options.app as string | undefined);
    const deploymentId = options['deployment-id'] as string | undefined;
    // A deployment's log is a story told from its start; an app's output is read from its end.
    if (!deploymentId && window.lines === undefined && window.since === undefined) window.lines = DEFAULT_APP_LOG_LINES;
    const base = deploymentId ? `/v1/apps/${app.id}/deployments/${encodeURIComponent(deploymentId)}/logs` : `/v1/apps/${app.id}/logs`;
    const end = await followLog(ctx, `${base}${windowQuery(window)}`, { follow: options.follow === true });
    if (deploymentId && end.state && ctx.format === 'human') ctx.err(`Deployment ${deploymentId}: ${end.state}${end.message ? ` (${end.message})` : ''}\n`);
    return deploymentId && end.state && end.state !== 'OK' && end.state !== 'WIP' ? 1 : 0;
  },
};
