import type { Command } from '../command.js';
import { resolveApp } from '../resolve-app.js';
import { waitForDeployment } from '../wait-deployment.js';

export const restart: Command = {
  path: ['restart'],
  summary: 'Start the current release again with the current variables (no rebuild), health-checked; --commit deploys a given commit (its kept release when there is one)',
  usage: 'restart [--app <app>] [--commit <sha>] [--no-follow]',
  options: { app: { type: 'string' }, commit: { type: 'string' }, 'no-follow': { type: 'boolean' } },
  args: { min: 0, max: 0 },
  async run(ctx, _args, options) {
    const app = await resolveApp(ctx, options.app as string | undefined);
    const commit = options.commit as string | undefined;
    const { deployment, rebuild } = commit
      ? await ctx.client().request<{ deployment: { id: string }; rebuild: boolean }>('POST', `/v1/apps/${app.id}/restart-commit`, { commit })
      : { ...(await ctx.client().request<{ deployment: { id: string } }>('POST', `/v1/apps/${app.id}/restart`)), rebuild: false };
    ctx.err(`Restart ${deployment.id} queued${commit ? (rebuild ? ` (no kept release of ${commit}: building it)` : ` (kept release of ${commit}, no rebuild)`) : ''}.\n`);
    if (options['no-follow']) return 0;
    const { code, state } = await waitForDeployment(ctx, app.id, deployment.id, false);
    ctx.err(`Restart ${state}${code === 0 ? `: ${app.url}` : ''}\n`);
    return code;
  },
};
