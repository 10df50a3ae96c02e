import type { Command } from '../../command.js';
import { resolveApp } from '../../resolve-app.js';
import { printServices, type Services } from '../../service-types.js';

export const serviceList: Command = {
  path: ['service'],
  summary: 'List the add-ons and applications the application is linked to',
  usage: 'service [--app <app>]',
  options: { app: { type: 'string' } },
  args: { min: 0, max: 0 },
  printsData: true,
  async run(ctx, _args, options) {
    const app = await resolveApp(ctx, options.app as string | undefined);
    printServices(ctx, await ctx.client().request<Services>('GET', `/v1/apps/${app.id}/services`));
  },
};
