import { ApiError, enc } from '../api.js';
import type { DomainListingView } from '../../../shared/api-types.js';
import { errorBox, field, formatTime, h, replaceChildren } from '../dom.js';
import type { Route } from '../routes.js';
import type { ViewContext } from '../view.js';
import { appFrame } from './app-frame.js';

const SOURCES = { acme: 'ACME', uploaded: 'uploaded', internal: 'internal CA', provisional: 'provisional (trusted by no client)' } as const;

/**
 * Domain names: the default `<app_id>.<domain>`, the custom domains with the certificate each is
 * served with, adding and removing one, and the favourite (the address shown for the app).
 */
export async function appDomainsView(ctx: ViewContext, route: Extract<Route, { page: 'app-domains' }>): Promise<void> {
  const { app, body } = await appFrame(ctx, route.app, 'app-domains');
  const base = `/v1/apps/${enc(app.id)}`;
  const card = h('section', { class: 'card', 'aria-labelledby': 'domains-title' });
  replaceChildren(body, card);
  const problem = errorBox();

  const act = async (message: string, change: () => Promise<unknown>) => {
    problem.show(undefined);
    try {
      await change();
      await draw();
      ctx.announce(message);
      document.getElementById('domain-name')?.focus();
    } catch (error) {
      problem.show((error as Error).message, error instanceof ApiError ? error.hint : null);
    }
  };

  const draw = async () => {
    const listing = await ctx.api.get<DomainListingView>(`${base}/domains`);
    if (ctx.signal.aborted) return;
    const name = field(
      'Add a domain',
      h('input', { type: 'text', id: 'domain-name', autocomplete: 'off', spellcheck: 'false', placeholder: 'shop.example.com' }),
      'A name you own, pointed at this platform, or *.example.com for every sub-domain.',
    );
    const form = h(
      'form',
      { class: 'inline-form', novalidate: true },
      name.wrapper,
      h('button', { type: 'submit', class: 'primary' }, 'Add'),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const fqdn = name.control.value.trim();
      if (!fqdn) return name.setError('Type a domain name first.');
      void act(`Domain ${fqdn} added.`, () => ctx.api.json('POST', `${base}/domains`, { fqdn }));
    });
    const favouriteMark = (fqdn: string) => (listing.favourite === fqdn ? h('span', { class: 'badge' }, 'favourite') : null);
    const rows = listing.domains.map((d) => {
      const remove = h('button', { type: 'button', class: 'secondary', 'aria-label': `Remove domain ${d.name}` }, 'Remove');
      remove.addEventListener(
        'click',
        () => void act(`Domain ${d.name} removed.`, () => ctx.api.json('DELETE', `${base}/domains/${enc(d.fqdn)}`)),
      );
      const favourite =
        d.favourite || d.wildcard
          ? null
          : h('button', { type: 'button', class: 'secondary', 'aria-label': `Make ${d.name} the favourite domain` }, 'Make favourite');
      favourite?.addEventListener(
        'click',
        () => void act(`${d.name} is now the favourite domain.`, () => ctx.api.json('PUT', `${base}/favourite-domain`, { fqdn: d.fqdn })),
      );
      const certificate = d.certificate
        ? `HTTPS: ${SOURCES[d.certificate.source]} certificate until ${formatTime(d.certificate.not_after)}`
        : 'HTTPS: no certificate yet';
      const acme =
        d.acme?.state === 'invalid'
          ? h('p', { class: 'field-error' }, `ACME failed: ${d.acme.error ?? 'unknown reason'}`)
          : d.acme?.state === 'pending'
            ? h('p', { class: 'meta' }, 'ACME order in progress')
            : null;
      return h(
        'li',
        { 'data-domain': d.fqdn },
        h(
          'span',
          {},
          h('strong', {}, d.name),
          d.name !== d.fqdn ? h('span', { class: 'meta' }, ` (${d.fqdn})`) : null,
          ' ',
          favouriteMark(d.fqdn),
          h('p', { class: 'meta' }, certificate),
          acme,
        ),
        favourite,
        remove,
      );
    });
    const clear =
      listing.favourite !== listing.default ? h('button', { type: 'button', class: 'secondary' }, 'Show the default domain again') : null;
    clear?.addEventListener(
      'click',
      () => void act('The default domain is the favourite again.', () => ctx.api.json('DELETE', `${base}/favourite-domain`)),
    );
    replaceChildren(
      card,
      h('h2', { id: 'domains-title' }, 'Domain names'),
      form,
      problem.el,
      h(
        'ul',
        { class: 'links', 'aria-label': 'Domains' },
        h(
          'li',
          { 'data-domain': listing.default },
          h('span', {}, h('strong', {}, listing.default), h('span', { class: 'meta' }, ' default'), ' ', favouriteMark(listing.default)),
          clear,
        ),
        ...rows,
      ),
    );
  };
  await draw();
}
