import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import type { Services } from '../../service-types.js';

export const serviceUnlinkAddon = command({
  path: ['service', 'unlink-addon'],
  summary: 'Unlink an add-on from the application',
  usage: 'service unlink-addon <addon> [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<addon>', description: 'The linked add-on: its id or name' }],
  examples: ['slipway service unlink-addon shop-db'],
  async run(ctx, [addon], options) {
    const app = await resolveAppOption(ctx, options);
    await ctx.client().request<Services>('DELETE', `/v1/apps/${app.id}/services/addons/${encodeURIComponent(addon)}`);
    ctx.err(
      `Unlinked add-on ${addon} from ${app.name}. Running instances keep its variables until the next deploy or \`slipway restart\`.\n`,
    );
  },
});
