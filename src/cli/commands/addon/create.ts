import { command } from '../../command.js';
import { UsageError } from '../../errors.js';
import { resolveApp } from '../../resolve-app.js';
import type { AddonSummary } from '../../addon-types.js';

export const addonCreate = command({
  path: ['addon', 'create'],
  summary: 'Create an add-on (postgresql, redis, fs-bucket) and optionally link applications to it',
  usage: 'addon create <provider> <addon-name> [--link <app>]... [--org <org>] [--plan <plan>] [--exclusive]',
  options: {
    link: {
      type: 'string',
      short: 'l',
      multiple: true,
      value: '<app>',
      description: 'Link this application to it (id, name or alias); repeat for several',
    },
    org: { type: 'string', short: 'o', value: '<org>', description: "The organisation (default: the linked apps', else your only one)" },
    plan: {
      type: 'string',
      short: 'p',
      value: '<plan>',
      description:
        "The plan; postgresql and redis have one (see `slipway addon providers`), an fs-bucket's is its size (1G unless given: 512M, 20G...)",
    },
    exclusive: {
      type: 'boolean',
      description:
        'fs-bucket only: an exclusive volume, mounted by one instance of one application at a time (SQLite); deploys hand it over',
    },
  },
  args: { min: 2, max: 2 },
  arguments: [
    { name: '<provider>', description: 'postgresql, redis or fs-bucket (postgresql-addon and redis-addon also work)' },
    { name: '<addon-name>', description: 'A name for the add-on, unique in its organisation' },
  ],
  examples: [
    'slipway addon create postgresql shop-db --link shop',
    'slipway addon create redis-addon cache --plan s_mono --org acme',
    'slipway addon create fs-bucket shop-files --plan 5G',
    'slipway addon create fs-bucket shop-db --exclusive --plan 2G --link shop',
  ],
  printsData: true,
  async run(ctx, [provider, name], options) {
    const client = ctx.client();
    const apps = [];
    for (const ref of options.link ?? []) apps.push(await resolveApp(ctx, ref));
    // The add-on lives in --org; else in the organisation of the apps it links; else in the user's only one.
    let org = options.org;
    if (!org && apps.length) org = apps[0]!.org_id;
    if (!org) {
      const { orgs } = await client.request<{ orgs: Array<{ id: string; name: string }> }>('GET', '/v1/orgs');
      if (orgs.length !== 1)
        throw new UsageError(`--org is required: you belong to ${orgs.length} organisations (${orgs.map((o) => o.name).join(', ')}).`);
      org = orgs[0]!.id;
    }
    ctx.err(`Creating ${provider} add-on ${JSON.stringify(name)}...\n`);
    const { addon } = await client.request<{ addon: AddonSummary }>('POST', '/v1/addons', {
      provider,
      name,
      org,
      link: apps.map((a) => a.id),
      ...(options.plan !== undefined ? { plan: options.plan } : {}),
      ...(options.exclusive ? { exclusive: true } : {}),
    });
    if (ctx.format === 'json') {
      ctx.out(JSON.stringify(addon, null, 2) + '\n');
      return;
    }
    ctx.out(`${addon.id}\n`);
    ctx.err(`Created ${addon.provider} add-on ${JSON.stringify(addon.name)} (${addon.id}) in ${addon.org_name}.\n`);
    if (apps.length) {
      ctx.err(`Linked to ${apps.map((a) => a.name).join(', ')}: they receive its variables at their next deploy or \`slipway restart\`.\n`);
    } else {
      ctx.err(`Link it to an application with: slipway service link-addon ${addon.name} --app <app>\n`);
    }
  },
});
