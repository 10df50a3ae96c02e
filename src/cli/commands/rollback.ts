import type { Command } from '../command.js';
import { resolveApp } from '../resolve-app.js';
import { waitForDeployment } from '../wait-deployment.js';

export const rollback: Command = {
  path: ['rollback'],
  summary: 'Go back to the previous OK release, or to a kept one by deployment id (no rebuild), health-checked',
  usage: 'rollback [<deployment-id>] [--app <app>] [--no-follow]',
  options: { app: { type: 'string' }, 'no-follow': { type: 'boolean' } },
  args: { min: 0, max: 1 },
  async run(ctx, [deploymentId], options) {
    const app = await resolveApp(ctx, options.app as string | undefined);
    const { deployment, rolled_back_to: target } = await ctx
      .client()
      .request<{ deployment: { id: string }; rolled_back_to: { id: string; commit: string } }>('POST', `/v1/apps/${app.id}/rollback`, deploymentId ? { deployment: deploymentId } : {});
    ctx.err(`Rollback ${deployment.id} queued: back to the release of deployment ${target.id} (commit ${target.commit.slice(0, 12)}).\n`);
    if (options['no-follow']) return 0;
    const { code, state } = await waitForDeployment(ctx, app.id, deployment.id, false);
    ctx.err(`Rollback ${state}${code === 0 ? `: ${app.url}` : ''}\n`);
    return code;
  },
};
