import type { AppDiskView } from '../../../shared/api-types.js';
import { command } from '../../command.js';
import { printTable } from '../../output.js';
import { humanSize } from '../../../shared/human-size.js';

interface DiskFree {
  label: string;
  path: string;
  free_bytes: number | null;
}

export const systemStatus = command({
  path: ['system', 'status'],
  summary: "Administrators: the platform's state, with each app's disk use against its budget",
  usage: 'system status [--format json]',
  options: {},
  args: { min: 0, max: 0 },
  examples: ['slipway system status', 'slipway system status --format json'],
  printsData: true,
  async run(ctx) {
    const status = await ctx
      .client()
      .request<{ apps: AppDiskView[]; min_free_bytes?: number | null; disks?: DiskFree[] }>('GET', '/v1/system/status');
    if (ctx.format !== 'json') {
      const reserve = status.min_free_bytes ? `, reserve ${humanSize(status.min_free_bytes)}` : ', no reserve';
      for (const d of status.disks ?? []) {
        const free = d.free_bytes === null ? 'unknown' : humanSize(d.free_bytes);
        const low =
          d.free_bytes !== null && status.min_free_bytes && d.free_bytes < status.min_free_bytes
            ? ' (below: builds and backups refused)'
            : '';
        ctx.out(`${d.label} ${d.path}: ${free} free${reserve}${low}\n`);
      }
    }
    const rows = status.apps.map((a) => ({
      app: a.app_name,
      id: a.app_id,
      'disk used': a.used_bytes === null ? '-' : humanSize(a.used_bytes),
      budget: humanSize(a.budget_bytes),
      use: a.used_bytes === null ? '-' : `${Math.round((a.used_bytes / a.budget_bytes) * 100)}%`,
    }));
    printTable(ctx, rows, ['app', 'id', 'disk used', 'budget', 'use'], status);
  },
});
