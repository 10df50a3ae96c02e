import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';

export const domainRm = command({
  path: ['domain', 'rm'],
  summary: 'Stop routing a domain to the application (its certificates go with it)',
  usage: 'domain rm <fqdn> [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<fqdn>', description: 'One of the domains `slipway domain` lists' }],
  examples: ['slipway domain rm shop.example.com'],
  async run(ctx, [fqdn], options) {
    const app = await resolveAppOption(ctx, options);
    await ctx.client().request('DELETE', `/v1/apps/${app.id}/domains/${encodeURIComponent(fqdn)}`);
    ctx.err(`${fqdn} no longer routes to ${app.name}.\n`);
  },
});
