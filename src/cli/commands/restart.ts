import { command } from '../command.js';
import { APP_OPTIONS, resolveAppOption } from '../app-options.js';
import { waitForDeployment } from '../wait-deployment.js';

export const restart = command({
  path: ['restart'],
  summary:
    'Start the current release again with the current variables (no rebuild), health-checked; --commit deploys a given commit (its kept release when there is one)',
  usage: 'restart [--app <app>] [--commit <sha>] [--no-follow]',
  options: {
    ...APP_OPTIONS,
    commit: {
      type: 'string',
      value: '<sha>',
      description: 'Deploy this pushed commit instead (its kept release when there is one, else a build)',
    },
    'no-follow': { type: 'boolean', description: 'Return once the restart is queued instead of waiting for its end' },
  },
  args: { min: 0, max: 0 },
  examples: ['slipway restart', 'slipway restart --commit 1a2b3c4', 'slipway restart --no-follow'],
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    const commit = options.commit;
    const { deployment, rebuild } = commit
      ? await ctx
          .client()
          .request<{ deployment: { id: string }; rebuild: boolean }>('POST', `/v1/apps/${app.id}/restart-commit`, { commit })
      : { ...(await ctx.client().request<{ deployment: { id: string } }>('POST', `/v1/apps/${app.id}/restart`)), rebuild: false };
    ctx.err(
      `Restart ${deployment.id} queued${commit ? (rebuild ? ` (no kept release of ${commit}: building it)` : ` (kept release of ${commit}, no rebuild)`) : ''}.\n`,
    );
    if (options['no-follow']) return 0;
    const { code, state } = await waitForDeployment(ctx, app.id, deployment.id, false);
    ctx.err(`Restart ${state}${code === 0 ? `: ${app.url}` : ''}\n`);
    return code;
  },
});
