import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';

export const envRm = command({
  path: ['env', 'rm'],
  summary: 'Remove an environment variable from the application',
  usage: 'env rm <variable-name> [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<variable-name>', description: 'The variable to remove' }],
  examples: ['slipway env rm DEBUG'],
  async run(ctx, [name], options) {
    const app = await resolveAppOption(ctx, options);
    await ctx.client().request('DELETE', `/v1/apps/${app.id}/env/${encodeURIComponent(name)}`);
    ctx.err(`Removed ${name} from ${app.name}.\n`);
  },
});
