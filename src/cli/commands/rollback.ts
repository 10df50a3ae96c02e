import { command } from '../command.js';
import { APP_OPTIONS, resolveAppOption } from '../app-options.js';
import { waitForDeployment } from '../wait-deployment.js';

export const rollback = command({
  path: ['rollback'],
  summary: 'Go back to the previous OK release, or to a kept one by deployment id (no rebuild), health-checked',
  usage: 'rollback [<deployment-id>] [--app <app>] [--no-follow]',
  options: {
    ...APP_OPTIONS,
    'no-follow': { type: 'boolean', description: 'Return once the rollback is queued instead of waiting for its end' },
  },
  args: { min: 0, max: 1 },
  arguments: [{ name: '[<deployment-id>]', description: 'The OK deployment whose kept release to go back to (default: the previous one)' }],
  examples: ['slipway rollback', 'slipway rollback deployment_0b6f2c0e-5f0c-4c3e-9d8f-1a2b3c4d5e6f'],
  async run(ctx, [deploymentId], options) {
    const app = await resolveAppOption(ctx, options);
    const { deployment, rolled_back_to: target } = await ctx
      .client()
      .request<{ deployment: { id: string }; rolled_back_to: { id: string; commit: string } }>(
        'POST',
        `/v1/apps/${app.id}/rollback`,
        deploymentId ? { deployment: deploymentId } : {},
      );
    ctx.err(`Rollback ${deployment.id} queued: back to the release of deployment ${target.id} (commit ${target.commit.slice(0, 12)}).\n`);
    if (options['no-follow']) return 0;
    const { code, state } = await waitForDeployment(ctx, app.id, deployment.id, false);
    ctx.err(`Rollback ${state}${code === 0 ? `: ${app.url}` : ''}\n`);
    return code;
  },
});
