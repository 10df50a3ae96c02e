import type { Command } from '../../command.js';
import { resolveApp } from '../../resolve-app.js';

export const envRm: Command = {
  path: ['env', 'rm'],
  summary: 'Remove an environment variable from the application',
  usage: 'env rm <variable-name> [--app <app>]',
  options: { app: { type: 'string' } },
  args: { min: 1, max: 1 },
  async run(ctx, [name], options) {
    const app = await resolveApp(ctx, options.app as string | undefined);
    await ctx.client().request('DELETE', `/v1/apps/${app.id}/env/${encodeURIComponent(name!)}`);
    ctx.err(`Removed ${name} from ${app.name}.\n`);
  },
};
