import { command } from '../command.js';
import { APP_OPTIONS, resolveAppOption } from '../app-options.js';
import { printTable } from '../output.js';

export const activity = command({
  path: ['activity'],
  summary: 'List the deployments of the application, newest first',
  usage: 'activity [--app <app>] [--limit 10]',
  options: { ...APP_OPTIONS, limit: { type: 'string', value: '<n>', description: 'How many deployments to list (default 10)' } },
  args: { min: 0, max: 0 },
  examples: ['slipway activity', 'slipway activity --limit 30 --format json'],
  printsData: true,
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    const limit = Number(options.limit ?? 10) || 10;
    const { deployments } = await ctx.client().request<{
      deployments: Array<{ id: string; state: string; cause: string; created_at: string; commit: string; message: string | null }>;
    }>('GET', `/v1/apps/${app.id}/deployments?limit=${limit}`);
    const rows = deployments.map((d) => ({ ...d, commit: d.commit?.slice(0, 12) ?? '', message: d.message ?? '' }));
    printTable(ctx, rows, ['created_at', 'state', 'cause', 'commit', 'id', 'message'], deployments);
  },
});
