import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import { reportRedeploys, type Redeployed } from '../../report-redeploys.js';

export const publishedConfigRm = command({
  path: ['published-config', 'rm'],
  summary: 'Stop exposing a variable (restarts the linked applications that run)',
  usage: 'published-config rm <variable-name> [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<variable-name>', description: 'The variable to stop exposing' }],
  examples: ['slipway published-config rm API_URL'],
  async run(ctx, [name], options) {
    const app = await resolveAppOption(ctx, options);
    const { redeployed } = await ctx
      .client()
      .request<{ redeployed: Redeployed[] }>('DELETE', `/v1/apps/${app.id}/published-config/${encodeURIComponent(name)}`);
    ctx.err(`${app.name} no longer exposes ${name}.\n`);
    reportRedeploys(ctx, redeployed);
  },
});
