import { command } from '../../command.js';
import { addonPath, type AddonSummary } from '../../addon-types.js';
import { humanSize } from '../../../shared/human-size.js';

export const addonInfo = command({
  path: ['addon', 'info'],
  summary: 'Show one add-on: its provider, its linked applications; an FS bucket also its size used and mount paths',
  usage: 'addon info <addon> [--org <org>] [--format json]',
  options: {
    org: { type: 'string', value: '<org>', description: 'The organisation of the add-on, when several of yours have one of that name' },
  },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<addon>', description: 'The add-on: its id or name' }],
  examples: ['slipway addon info shop-files', 'slipway addon info shop-files --format json'],
  printsData: true,
  async run(ctx, [ref], options) {
    const client = ctx.client();
    const { addon } = await client.request<{ addon: AddonSummary }>('GET', addonPath(ref, options.org));
    if (ctx.format === 'json') {
      ctx.out(JSON.stringify(addon, null, 2) + '\n');
      return;
    }
    const { apps } = await client.request<{ apps: Array<{ id: string; name: string }> }>('GET', '/v1/apps');
    const appName = new Map(apps.map((a) => [a.id, a.name]));
    const lines = [
      `name:      ${addon.name}`,
      `provider:  ${addon.provider}`,
      `id:        ${addon.id}`,
      `org:       ${addon.org_name ?? addon.org_id}`,
      `created:   ${addon.created_at}`,
    ];
    const bucket = addon.bucket;
    if (bucket) {
      lines.push(`host:      ${bucket.host}`);
      if (bucket.exclusive) lines.push('exclusive: yes (one instance of one application mounts it at a time; deploys hand it over)');
      lines.push(
        `size:      ${bucket.used_bytes === null ? 'not mounted now' : humanSize(bucket.used_bytes)} used of ${humanSize(bucket.size_bytes)}`,
      );
    }
    lines.push(`linked:    ${addon.linked_apps.length === 0 ? '-' : ''}`);
    for (const id of addon.linked_apps) {
      const paths = bucket?.mounts.filter((m) => m.app_id === id).map((m) => m.path) ?? [];
      const where = bucket ? (paths.length ? ` at ${paths.join(', ')}` : ' (no CC_FS_BUCKET names it: not mounted)') : '';
      lines.push(`  ${appName.get(id) ?? id}${where}`);
    }
    ctx.out(lines.join('\n') + '\n');
  },
});
