import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import { reportRedeploys, type Redeployed } from '../../report-redeploys.js';

export const publishedConfigSet = command({
  path: ['published-config', 'set'],
  summary: 'Expose a variable to the applications linked to this one (restarts those that run)',
  usage: 'published-config set <variable-name> <variable-value> [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 2, max: 2 },
  valuesMayStartWithDash: true,
  arguments: [
    { name: '<variable-name>', description: 'The variable to expose' },
    { name: '<variable-value>', description: 'Its value' },
  ],
  examples: ['slipway published-config set API_URL http://api.internal/'],
  async run(ctx, [name, value], options) {
    const app = await resolveAppOption(ctx, options);
    const { redeployed } = await ctx
      .client()
      .request<{ redeployed: Redeployed[] }>('PUT', `/v1/apps/${app.id}/published-config/${encodeURIComponent(name)}`, { value });
    ctx.err(`${app.name} exposes ${name}.\n`);
    reportRedeploys(ctx, redeployed);
  },
});
