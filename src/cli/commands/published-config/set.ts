import type { Command } from '../../command.js';
import { resolveApp } from '../../resolve-app.js';
import { reportRedeploys, type Redeployed } from '../../report-redeploys.js';

export const publishedConfigSet: Command = {
  path: ['published-config', 'set'],
  summary: 'Expose a variable to the applications linked to this one (restarts those that run)',
  usage: 'published-config set <variable-name> <variable-value> [--app <app>]',
  options: { app: { type: 'string' } },
  args: { min: 2, max: 2 },
  async run(ctx, [name, value], options) {
    const app = await resolveApp(ctx, options.app as string | undefined);
    const { redeployed } = await ctx.client().request<{ redeployed: Redeployed[] }>('PUT', `/v1/apps/${app.id}/published-config/${encodeURIComponent(name!)}`, { value });
    ctx.err(`${app.name} exposes ${name}.\n`);
    reportRedeploys(ctx, redeployed);
  },
};
