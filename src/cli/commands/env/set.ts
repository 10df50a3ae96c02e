import type { Command } from '../../command.js';
import { resolveApp } from '../../resolve-app.js';

export const envSet: Command = {
  path: ['env', 'set'],
  summary: 'Set an environment variable on the application',
  usage: 'env set <variable-name> <variable-value> [--app <app>]',
  options: { app: { type: 'string' } },
  args: { min: 2, max: 2 },
  async run(ctx, [name, value], options) {
    const app = await resolveApp(ctx, options.app as string | undefined);
    await ctx.client().request('PUT', `/v1/apps/${app.id}/env/${encodeURIComponent(name!)}`, { value });
    ctx.err(`Set ${name} on ${app.name}. Running instances see it after the next deploy or \`slipway restart\`.\n`);
  },
};
