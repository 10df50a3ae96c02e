import type { Command } from '../command.js';
import { resolveApp } from '../resolve-app.js';
import { followLog } from '../follow-log.js';

export const logs: Command = {
  path: ['logs'],
  summary: "Show the application's output, or a deployment's log with --deployment-id",
  usage: 'logs [--app <app>] [--deployment-id <id>] [--follow] [--format human|json]',
  options: { app: { type: 'string' }, 'deployment-id': { type: 'string' }, follow: { type: 'boolean', short: 'f' } },
  args: { min: 0, max: 0 },
  printsData: true,
  async run(ctx, _args, options) {
    const app = await resolveApp(ctx, options.app as string | undefined);
    const deploymentId = options['deployment-id'] as string | undefined;
    const path = deploymentId ? `/v1/apps/${app.id}/deployments/${encodeURIComponent(deploymentId)}/logs` : `/v1/apps/${app.id}/logs`;
    const end = await followLog(ctx, path, { follow: options.follow === true });
    if (deploymentId && end.state && ctx.format === 'human') ctx.err(`Deployment ${deploymentId}: ${end.state}${end.message ? ` (${end.message})` : ''}\n`);
    return deploymentId && end.state && end.state !== 'OK' && end.state !== 'WIP' ? 1 : 0;
  },
};
