import type { Command } from '../../command.js';
import { resolveApp } from '../../resolve-app.js';
import type { Services } from '../../service-types.js';

export const serviceUnlinkAddon: Command = {
  path: ['service', 'unlink-addon'],
  summary: 'Unlink an add-on from the application',
  usage: 'service unlink-addon <addon> [--app <app>]',
  options: { app: { type: 'string' } },
  args: { min: 1, max: 1 },
  async run(ctx, [addon], options) {
    const app = await resolveApp(ctx, options.app as string | undefined);
    await ctx.client().request<Services>('DELETE', `/v1/apps/${app.id}/services/addons/${encodeURIComponent(addon!)}`);
    ctx.err(`Unlinked add-on ${addon} from ${app.name}. Running instances keep its variables until the next deploy or \`slipway restart\`.\n`);
  },
};
