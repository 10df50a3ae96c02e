import type { AppDiskView } from '../../../shared/api-types.js';
import type { Command } from '../../command.js';
import { printTable } from '../../output.js';
import { formatDiskSize } from '../../../core/disk-size.js';

export const systemStatus: Command = {
  path: ['system', 'status'],
  summary: "Administrators: the platform's state, with each app's disk use against its budget",
  usage: 'system status [--format json]',
  options: {},
  args: { min: 0, max: 0 },
  examples: ['slipway system status', 'slipway system status --format json'],
  printsData: true,
  async run(ctx) {
    const status = await ctx.client().request<{ apps: AppDiskView[] }>('GET', '/v1/system/status');
    const rows = status.apps.map((a) => ({
      app: a.app_name,
      id: a.app_id,
      'disk used': a.used_bytes === null ? '-' : formatDiskSize(a.used_bytes),
      budget: formatDiskSize(a.budget_bytes),
      use: a.used_bytes === null ? '-' : `${Math.round((a.used_bytes / a.budget_bytes) * 100)}%`,
    }));
    printTable(ctx, rows, ['app', 'id', 'disk used', 'budget', 'use'], status);
  },
};
