import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import type { DomainView } from './list.js';

export const domainAdd = command({
  path: ['domain', 'add'],
  summary: 'Route a domain, or every sub-domain of one (*.example.com), to the application',
  usage: 'domain add <fqdn> [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<fqdn>', description: 'shop.example.com, *.example.com or an international name' }],
  examples: ['slipway domain add shop.example.com', "slipway domain add '*.example.com'"],
  async run(ctx, [fqdn], options) {
    const app = await resolveAppOption(ctx, options);
    const { domain } = await ctx.client().request<{ domain: DomainView }>('POST', `/v1/apps/${app.id}/domains`, { fqdn });
    const spelled = domain.name === domain.fqdn ? domain.fqdn : `${domain.fqdn} (${domain.name})`;
    if (domain.verification.state === 'pending') {
      ctx.err(
        `${spelled} is added to ${app.name} and waits for proof that the name is yours: it is not routed and gets no certificate until then.\n` +
          `Create this DNS TXT record, then point the name's DNS at this platform:\n` +
          `  ${domain.verification.record}  TXT  "${domain.verification.token}"\n` +
          'slipway checks it every few seconds; `slipway domain` shows when it is verified.\n',
      );
      return;
    }
    ctx.err(`${spelled} now routes to ${app.name}. Point its DNS at this platform.\n`);
  },
});
