import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';

export type { DomainView, DomainListingView as DomainListing } from '../../../shared/api-types.js';
import type { DomainListingView as DomainListing } from '../../../shared/api-types.js';

/** One line per domain: the favourite marked, the certificate served and any ACME trouble. */
export function printDomains(out: (text: string) => void, listing: DomainListing): void {
  const mark = (fqdn: string) => (fqdn === listing.favourite ? '* ' : '  ');
  out(`${mark(listing.default)}${listing.default}    (default)\n`);
  for (const d of listing.domains) {
    const shown = d.name === d.fqdn ? d.fqdn : `${d.fqdn} (${d.name})`;
    const cert = d.certificate
      ? `certificate: ${d.certificate.source}, until ${d.certificate.not_after.slice(0, 10)}${d.certificate.source === 'provisional' ? ' (trusted by no client: upload one with `slipway domain cert set`, or use ACME)' : ''}`
      : 'no certificate yet';
    if (d.verification?.state === 'pending') {
      out(`${mark(d.fqdn)}${shown}    waiting for DNS proof: TXT ${d.verification.record} "${d.verification.token}" (not routed)\n`);
      continue;
    }
    const acme =
      d.acme?.state === 'invalid' && d.acme.error
        ? `; ACME failed: ${d.acme.error}${d.acme.retry_after ? ` (${d.acme.failures} in a row; next try after ${d.acme.retry_after})` : ''}`
        : d.acme?.state === 'pending'
          ? '; ACME order pending'
          : '';
    out(`${mark(d.fqdn)}${shown}    ${cert}${acme}\n`);
  }
}

export const domainList = command({
  path: ['domain'],
  summary: "List the application's domains (the favourite is marked with *)",
  usage: 'domain [--app <app>] [--format human|json]',
  options: { ...APP_OPTIONS },
  args: { min: 0, max: 0 },
  examples: ['slipway domain', 'slipway domain --format json'],
  printsData: true,
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    const listing = await ctx.client().request<DomainListing>('GET', `/v1/apps/${app.id}/domains`);
    if (ctx.format === 'json') {
      ctx.out(JSON.stringify(listing, null, 2) + '\n');
      return;
    }
    printDomains(ctx.out, listing);
  },
});
