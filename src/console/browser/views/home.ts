import type { App, Org } from '../api.js';
import { enc } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { href } from '../routes.js';
import { pageTitle, type ViewContext } from '../view.js';

/** Every organisation of the user with its applications. */
export async function homeView(ctx: ViewContext): Promise<void> {
  const { orgs } = await ctx.api.get<{ orgs: Org[] }>('/v1/orgs');
  const appsByOrg = await Promise.all(orgs.map((org) => ctx.api.get<{ apps: App[] }>(`/v1/apps?org=${enc(org.id)}`)));
  const sections = orgs.map((org, i) => {
    const apps = appsByOrg[i]!.apps;
    const headingId = `org-${org.id}`;
    return h(
      'section',
      { class: 'card', 'aria-labelledby': headingId },
      h('div', { class: 'section-head' }, h('h2', { id: headingId }, org.name), org.role ? h('span', { class: 'badge' }, org.role) : null),
      apps.length
        ? h(
            'ul',
            { class: 'app-list', 'aria-label': `Applications of ${org.name}` },
            ...apps.map((app) =>
              h(
                'li',
                {},
                h('a', { href: href({ page: 'app-info', app: app.id }) }, app.name),
                h('span', { class: 'meta' }, `${app.type} · ${app.region} · ${app.id}`),
              ),
            ),
          )
        : h('p', { class: 'empty' }, 'No applications yet.'),
      h(
        'p',
        { class: 'actions' },
        h('a', { class: 'button', href: href({ page: 'create-app', org: org.id }) }, 'Create an application'),
        h('a', { class: 'button secondary', href: href({ page: 'addons', org: org.id }) }, 'Add-ons'),
      ),
    );
  });
  replaceChildren(
    ctx.main,
    pageTitle('Organisations'),
    orgs.length ? null : h('p', { class: 'empty' }, 'You belong to no organisation yet. `slipway org create <name>` makes one.'),
    ...sections,
  );
}
