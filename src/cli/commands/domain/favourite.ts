import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import type { DomainListing } from './list.js';

export const domainFavouriteSet = command({
  path: ['domain', 'favourite', 'set'],
  summary: 'Make one of the domains the address the CLI and console print for the application',
  usage: 'domain favourite set <fqdn> [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<fqdn>', description: 'One of the domains `slipway domain` lists (not a wildcard)' }],
  examples: ['slipway domain favourite set shop.example.com'],
  async run(ctx, [fqdn], options) {
    const app = await resolveAppOption(ctx, options);
    const listing = await ctx.client().request<DomainListing>('PUT', `/v1/apps/${app.id}/favourite-domain`, { fqdn });
    ctx.err(`${app.name} is now shown as ${listing.favourite}.\n`);
  },
});

export const domainFavouriteRm = command({
  path: ['domain', 'favourite', 'rm'],
  summary: 'Show the application at its default <app_id>.<domain> again',
  usage: 'domain favourite rm [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 0, max: 0 },
  examples: ['slipway domain favourite rm'],
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    const listing = await ctx.client().request<DomainListing>('DELETE', `/v1/apps/${app.id}/favourite-domain`);
    ctx.err(`${app.name} is now shown as ${listing.favourite}.\n`);
  },
});
