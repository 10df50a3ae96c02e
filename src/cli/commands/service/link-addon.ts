import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import type { Services } from '../../service-types.js';

export const serviceLinkAddon = command({
  path: ['service', 'link-addon'],
  summary: 'Link an add-on: the application receives its variables',
  usage: 'service link-addon <addon> [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<addon>', description: 'The add-on to link: its id or name (same organisation)' }],
  examples: ['slipway service link-addon shop-db'],
  async run(ctx, [addon], options) {
    const app = await resolveAppOption(ctx, options);
    await ctx.client().request<Services>('POST', `/v1/apps/${app.id}/services/addons`, { addon });
    ctx.err(`Linked add-on ${addon} to ${app.name}. Running instances see its variables after the next deploy or \`slipway restart\`.\n`);
  },
});
