import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import { printServices, type Services } from '../../service-types.js';

export const serviceList = command({
  path: ['service'],
  summary: 'List the add-ons and applications the application is linked to',
  usage: 'service [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 0, max: 0 },
  examples: ['slipway service', 'slipway service --format json'],
  printsData: true,
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    printServices(ctx, await ctx.client().request<Services>('GET', `/v1/apps/${app.id}/services`));
  },
});
