import type { Command } from '../../command.js';
import { resolveApp } from '../../resolve-app.js';
import { reportRedeploys, type Redeployed } from '../../report-redeploys.js';

export const publishedConfigRm: Command = {
  path: ['published-config', 'rm'],
  summary: 'Stop exposing a variable (restarts the linked applications that run)',
  usage: 'published-config rm <variable-name> [--app <app>]',
  options: { app: { type: 'string' } },
  args: { min: 1, max: 1 },
  async run(ctx, [name], options) {
    const app = await resolveApp(ctx, options.app as string | undefined);
    const { redeployed } = await ctx.client().request<{ redeployed: Redeployed[] }>('DELETE', `/v1/apps/${app.id}/published-config/${encodeURIComponent(name!)}`);
    ctx.err(`${app.name} no longer exposes ${name}.\n`);
    reportRedeploys(ctx, redeployed);
  },
};
