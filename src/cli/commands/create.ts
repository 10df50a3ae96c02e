import { command } from '../command.js';
import { assertAliasFree, linkApp } from '../link-file.js';
import { UsageError } from '../errors.js';
// The list alone, not the registry: loading the providers would slow every command's start.
import { APP_TYPES } from '../../providers/app-types.js';
import type { AppSummary } from '../resolve-app.js';

const TYPES = APP_TYPES.map((t) => t.name);

export const create = command({
  path: ['create'],
  summary: 'Create an application and link the current folder to it',
  usage: `create --type <${TYPES.join('|')}> <app-name> --region <par|mtl> --org <org> [--alias <alias>]`,
  options: {
    type: {
      type: 'string',
      short: 't',
      value: `<${TYPES.join('|')}>`,
      choices: TYPES,
      description: `The runtime: ${APP_TYPES.map((t) => `${t.name} (${t.label})`).join(', ')}`,
    },
    region: { type: 'string', short: 'r', value: '<par|mtl>', choices: ['par', 'mtl'], description: 'The region label (default par)' },
    org: { type: 'string', short: 'o', value: '<org>', description: 'The organisation (id or name); optional when you belong to only one' },
    alias: { type: 'string', short: 'a', value: '<alias>', description: 'The name this folder uses for the app (default: the app name)' },
  },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<app-name>', description: 'The application name, unique in its organisation' }],
  examples: ['slipway create --type node shop --region par --org acme', 'slipway create -t sbt api --alias backend'],
  printsData: true,
  async run(ctx, [name], options) {
    if (!options.type) throw new UsageError('--type is required (node or sbt).');
    assertAliasFree(ctx.cwd, options.alias ?? name);
    const client = ctx.client();
    let org = options.org;
    if (!org) {
      // Without --org, a user with exactly one organisation gets it; otherwise they must choose.
      const { orgs } = await client.request<{ orgs: Array<{ id: string; name: string }> }>('GET', '/v1/orgs');
      if (orgs.length !== 1)
        throw new UsageError(`--org is required: you belong to ${orgs.length} organisations (${orgs.map((o) => o.name).join(', ')}).`);
      org = orgs[0]!.id;
    }
    const { app } = await client.request<{ app: AppSummary }>('POST', '/v1/apps', {
      type: options.type,
      name,
      region: options.region ?? 'par',
      org,
    });
    const alias = options.alias ?? app.name;
    const path = linkApp(ctx.cwd, { app_id: app.id, org_id: app.org_id, name: app.name, alias, git_ssh_url: app.git_url });
    if (ctx.format === 'json') {
      ctx.out(JSON.stringify(app, null, 2) + '\n');
    } else {
      ctx.out(`${app.id}\n`);
      ctx.err(
        `Created ${app.type} application ${JSON.stringify(app.name)} (${app.id}) in ${app.org_name} (${app.region}).\n` +
          `Linked this folder in ${path} (alias ${JSON.stringify(alias)}).\n` +
          `Git deployment URL: ${app.git_url}\n` +
          `Next: git remote add slipway ${app.git_url} && git push slipway master   (or: slipway deploy)\n`,
      );
    }
  },
});
