import { command } from '../command.js';
import { printTable } from '../output.js';
import { findLinkFile } from '../link-file.js';
import type { AppSummary } from '../resolve-app.js';

export const applications = command({
  path: ['applications'],
  summary: 'List your applications (linked ones are marked with their alias)',
  usage: 'applications [--org <org>]',
  options: { org: { type: 'string', value: '<org>', description: 'Only the applications of this organisation (id or name)' } },
  args: { min: 0, max: 0 },
  examples: ['slipway applications', 'slipway applications --org acme --format json'],
  printsData: true,
  async run(ctx, _args, options) {
    const query = options.org ? `?org=${encodeURIComponent(options.org)}` : '';
    const { apps } = await ctx.client().request<{ apps: AppSummary[] }>('GET', `/v1/apps${query}`);
    const link = findLinkFile(ctx.cwd)?.data;
    const rows = apps.map((a) => ({
      id: a.id,
      name: a.name,
      type: a.type,
      region: a.region,
      org: a.org_name ?? a.org_id,
      alias: link?.apps.find((l) => l.app_id === a.id)?.alias ?? '',
    }));
    printTable(ctx, rows, ['id', 'name', 'type', 'region', 'org', 'alias'], apps);
  },
});
