import type { Command } from '../command.js';
import { resolveApp } from '../resolve-app.js';

export const cancelDeploy: Command = {
  path: ['cancel-deploy'],
  summary: "Cancel the application's running deployment (the previous release keeps serving)",
  usage: 'cancel-deploy [--app <app>]',
  options: { app: { type: 'string' } },
  args: { min: 0, max: 0 },
  async run(ctx, _args, options) {
    const app = await resolveApp(ctx, options.app as string | undefined);
    const { cancelled } = await ctx.client().request<{ cancelled: Array<{ id: string }> }>('POST', `/v1/apps/${app.id}/deployments/cancel`);
    if (cancelled.length === 0) {
      ctx.err(`No deployment of ${app.name} is running.\n`);
      return 1;
    }
    ctx.err(`Cancelled ${cancelled.map((d) => d.id).join(', ')}.\n`);
  },
};
