import type { Command } from '../command.js';
import { linkApp } from '../link-file.js';
import { UsageError } from '../errors.js';
import type { AppSummary } from '../resolve-app.js';

export const create: Command = {
  path: ['create'],
  summary: 'Create an application and link the current folder to it',
  usage: 'create --type <node|sbt> <app-name> --region <par|mtl> --org <org> [--alias <alias>]',
  options: { type: { type: 'string' }, region: { type: 'string' }, org: { type: 'string' }, alias: { type: 'string' } },
  args: { min: 1, max: 1 },
  printsData: true,
  async run(ctx, [name], options) {
    if (!options.type) throw new UsageError('--type is required (node or sbt).');
    const client = ctx.client();
    let org = options.org as string | undefined;
    if (!org) {
      // Without --org, a user with exactly one organisation gets it; otherwise they must choose.
      const { orgs } = await client.request<{ orgs: Array<{ id: string; name: string }> }>('GET', '/v1/orgs');
      if (orgs.length !== 1) throw new UsageError(`--org is required: you belong to ${orgs.length} organisations (${orgs.map((o) => o.name).join(', ')}).`);
      org = orgs[0]!.id;
    }
    const { app } = await client.request<{ app: AppSummary }>('POST', '/v1/apps', {
      type: options.type,
      name,
      region: options.region ?? 'par',
      org,
    });
    const alias = (options.alias as string | undefined) ?? app.name;
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
};
