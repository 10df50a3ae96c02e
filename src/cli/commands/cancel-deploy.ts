import { command } from '../command.js';
import { APP_OPTIONS, resolveAppOption } from '../app-options.js';

export const cancelDeploy = command({
  path: ['cancel-deploy'],
  summary: "Cancel the application's running deployment (the previous release keeps serving)",
  usage: 'cancel-deploy [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 0, max: 0 },
  examples: ['slipway cancel-deploy', 'slipway cancel-deploy --alias shop'],
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    const { cancelled } = await ctx.client().request<{ cancelled: Array<{ id: string }> }>('POST', `/v1/apps/${app.id}/deployments/cancel`);
    if (cancelled.length === 0) {
      ctx.err(`No deployment of ${app.name} is running.\n`);
      return 1;
    }
    ctx.err(`Cancelled ${cancelled.map((d) => d.id).join(', ')}.\n`);
  },
});
