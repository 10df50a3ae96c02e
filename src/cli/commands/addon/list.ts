import { command } from '../../command.js';
import { printTable } from '../../output.js';
import type { AddonSummary } from '../../addon-types.js';
import { humanSize } from '../../../shared/human-size.js';

export const addonList = command({
  path: ['addon', 'list'],
  summary: 'List the add-ons of your organisations (or of one with --org); FS buckets with their size used and mount paths',
  usage: 'addon list [--org <org>]',
  options: { org: { type: 'string', value: '<org>', description: 'Only the add-ons of this organisation (id or name)' } },
  args: { min: 0, max: 0 },
  examples: ['slipway addon list', 'slipway addon list --org acme --format json'],
  printsData: true,
  async run(ctx, _args, options) {
    const client = ctx.client();
    const org = options.org;
    const { addons } = await client.request<{ addons: AddonSummary[] }>('GET', `/v1/addons${org ? `?org=${encodeURIComponent(org)}` : ''}`);
    if (ctx.format === 'json') {
      ctx.out(JSON.stringify(addons, null, 2) + '\n');
      return;
    }
    const { apps } = await client.request<{ apps: Array<{ id: string; name: string }> }>('GET', '/v1/apps');
    const appName = new Map(apps.map((a) => [a.id, a.name]));
    // An FS bucket also shows its size used against its size and where each app sees it.
    const linkedTo = (a: AddonSummary) =>
      a.linked_apps
        .map((id) => {
          const paths = a.bucket?.mounts.filter((m) => m.app_id === id).map((m) => m.path) ?? [];
          return `${appName.get(id) ?? id}${paths.length ? ` (${paths.join(', ')})` : ''}`;
        })
        .join(', ') || '-';
    const rows = addons.map((a) => ({
      name: a.name,
      provider: a.bucket?.exclusive ? `${a.provider} (exclusive)` : a.provider,
      org: a.org_name ?? a.org_id,
      size: a.bucket ? `${a.bucket.used_bytes === null ? '?' : humanSize(a.bucket.used_bytes)} / ${humanSize(a.bucket.size_bytes)}` : '-',
      linked: linkedTo(a),
      id: a.id,
    }));
    const columns = addons.some((a) => a.bucket)
      ? ['name', 'provider', 'org', 'size', 'linked', 'id']
      : ['name', 'provider', 'org', 'linked', 'id'];
    printTable(ctx, rows, columns as Array<keyof (typeof rows)[number]>);
  },
});
