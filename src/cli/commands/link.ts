import type { Command } from '../command.js';
import { linkApp } from '../link-file.js';
import { resolveApp } from '../resolve-app.js';

export const link: Command = {
  path: ['link'],
  summary: 'Link the current folder to an existing application',
  usage: 'link <app-id|name> [--alias <alias>]',
  options: { alias: { type: 'string' } },
  args: { min: 1, max: 1 },
  async run(ctx, [ref], options) {
    const app = await resolveApp(ctx, ref);
    const alias = (options.alias as string | undefined) ?? app.name;
    const path = linkApp(ctx.cwd, { app_id: app.id, org_id: app.org_id, name: app.name, alias, git_ssh_url: app.git_url });
    ctx.err(`Linked ${app.name} (${app.id}) as ${JSON.stringify(alias)} in ${path}.\n`);
  },
};
