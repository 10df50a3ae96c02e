import { command } from '../../command.js';
import { printTable } from '../../output.js';
import type { AddonSummary } from '../../addon-types.js';

export const addonList = command({
  path: ['addon', 'list'],
  summary: 'List the add-ons of your organisations (or of one with --org)',
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
    const rows = addons.map((a) => ({
      name: a.name,
      provider: a.provider,
      org: a.org_name ?? a.org_id,
      linked: a.linked_apps.map((id) => appName.get(id) ?? id).join(', ') || '-',
      id: a.id,
    }));
    printTable(ctx, rows, ['name', 'provider', 'org', 'linked', 'id']);
  },
});
