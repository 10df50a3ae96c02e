import type { Command } from '../../command.js';
import { resolveApp } from '../../resolve-app.js';
import type { Services } from '../../service-types.js';

export const serviceLinkAddon: Command = {
  path: ['service', 'link-addon'],
  summary: "Link an add-on: the application receives its variables",
  usage: 'service link-addon <addon> [--app <app>]',
  options: { app: { type: 'string' } },
  args: { min: 1, max: 1 },
  async run(ctx, [addon], options) {
    const app = await resolveApp(ctx, options.app as string | undefined);
    await ctx.client().request<Services>('POST', `/v1/apps/${app.id}/services/addons`, { addon });
    ctx.err(`Linked add-on ${addon} to ${app.name}. Running instances see its variables after the next deploy or \`slipway restart\`.\n`);
  },
};
