import { ApiError, enc, type Addon, type App, type Services } from '../api.js';
import { errorBox, field, h, replaceChildren, select } from '../dom.js';
import { href, type Route } from '../routes.js';
import type { ViewContext } from '../view.js';
import { appFrame } from './app-frame.js';

/**
 * Service Dependencies (docs/behaviour.md, Links): a "Link add-ons" dropdown with its add button and a
 * "Link applications" dropdown on the same page, with the current links and Unlink.
 */
export async function appServicesView(ctx: ViewContext, route: Extract<Route, { page: 'app-services' }>): Promise<void> {
  const { app, body } = await appFrame(ctx, route.app, 'app-services');
  const base = `/v1/apps/${enc(app.id)}/services`;

  const addonCard = h('section', { class: 'card', 'aria-labelledby': 'addons-title' });
  const appCard = h('section', { class: 'card', 'aria-labelledby': 'apps-title' });
  replaceChildren(body, addonCard, appCard);

  /** Runs a link change, then redraws and puts the focus back where the user was. */
  const act = async (problem: ReturnType<typeof errorBox>, focusId: string, message: string, change: () => Promise<unknown>) => {
    problem.show(undefined);
    try {
      await change();
      await draw();
      ctx.announce(message);
      document.getElementById(focusId)?.focus();
    } catch (error) {
      problem.show((error as Error).message, error instanceof ApiError ? error.hint : null);
    }
  };

  const draw = async () => {
    const [services, { addons }, { apps }] = await Promise.all([
      ctx.api.get<Services>(base),
      ctx.api.get<{ addons: Addon[] }>(`/v1/addons?org=${enc(app.org_id)}`),
      ctx.api.get<{ apps: App[] }>(`/v1/apps?org=${enc(app.org_id)}`),
    ]);
    if (ctx.signal.aborted) return;

    const linkedAddons = new Set(services.addons.map((a) => a.id));
    const addonChoices = addons.filter((a) => !linkedAddons.has(a.id));
    const addonSelect = field(
      'Link add-ons',
      select(
        [
          { value: '', label: addonChoices.length ? 'Choose an add-on' : 'No other add-on in this organisation' },
          ...addonChoices.map((a) => ({ value: a.id, label: `${a.name} (${a.provider})` })),
        ],
        { id: 'link-addon' },
      ),
    );
    const addonProblem = errorBox();
    const addonForm = h(
      'form',
      { class: 'inline-form', novalidate: true },
      addonSelect.wrapper,
      h('button', { type: 'submit', class: 'primary' }, 'Add'),
    );
    addonForm.addEventListener('submit', (event) => {
      event.preventDefault();
      const chosen = addons.find((a) => a.id === addonSelect.control.value);
      if (!chosen) return addonSelect.setError('Choose an add-on to link first.');
      void act(addonProblem, 'link-addon', `Add-on ${chosen.name} linked.`, () =>
        ctx.api.json('POST', `${base}/addons`, { addon: chosen.id }),
      );
    });
    replaceChildren(
      addonCard,
      h('h2', { id: 'addons-title' }, 'Add-ons'),
      addonForm,
      addonProblem.el,
      addonChoices.length
        ? null
        : h('p', { class: 'help' }, h('a', { href: href({ page: 'addon-create', org: app.org_id }) }, 'Create an add-on'), ' to link one.'),
      h('h3', {}, 'Linked add-ons'),
      services.addons.length
        ? h(
            'ul',
            { class: 'links', 'aria-label': 'Linked add-ons' },
            ...services.addons.map((a) => {
              const unlink = h('button', { type: 'button', class: 'secondary', 'aria-label': `Unlink add-on ${a.name}` }, 'Unlink');
              unlink.addEventListener(
                'click',
                () =>
                  void act(addonProblem, 'link-addon', `Add-on ${a.name} unlinked.`, () =>
                    ctx.api.json('DELETE', `${base}/addons/${enc(a.id)}`),
                  ),
              );
              return h(
                'li',
                { 'data-addon': a.id },
                h('span', {}, h('strong', {}, a.name), h('span', { class: 'meta' }, ` ${a.provider}`)),
                unlink,
              );
            }),
          )
        : h('p', { class: 'empty' }, 'No add-on linked.'),
    );

    const linkedApps = new Set(services.apps.map((a) => a.id));
    const appChoices = apps.filter((a) => a.id !== app.id && !linkedApps.has(a.id));
    const appSelect = field(
      'Link applications',
      select(
        [
          { value: '', label: appChoices.length ? 'Choose an application' : 'No other application in this organisation' },
          ...appChoices.map((a) => ({ value: a.id, label: a.name })),
        ],
        { id: 'link-app' },
      ),
    );
    const appProblem = errorBox();
    const appForm = h(
      'form',
      { class: 'inline-form', novalidate: true },
      appSelect.wrapper,
      h('button', { type: 'submit', class: 'primary' }, 'Add'),
    );
    appForm.addEventListener('submit', (event) => {
      event.preventDefault();
      const chosen = apps.find((a) => a.id === appSelect.control.value);
      if (!chosen) return appSelect.setError('Choose an application to link first.');
      void act(appProblem, 'link-app', `Application ${chosen.name} linked.`, () =>
        ctx.api.json('POST', `${base}/apps`, { app: chosen.id }),
      );
    });
    replaceChildren(
      appCard,
      h('h2', { id: 'apps-title' }, 'Applications'),
      h('p', { class: 'help' }, 'A linked application gives this one the configuration it exposes.'),
      appForm,
      appProblem.el,
      h('h3', {}, 'Linked applications'),
      services.apps.length
        ? h(
            'ul',
            { class: 'links', 'aria-label': 'Linked applications' },
            ...services.apps.map((a) => {
              const unlink = h('button', { type: 'button', class: 'secondary', 'aria-label': `Unlink application ${a.name}` }, 'Unlink');
              unlink.addEventListener(
                'click',
                () =>
                  void act(appProblem, 'link-app', `Application ${a.name} unlinked.`, () =>
                    ctx.api.json('DELETE', `${base}/apps/${enc(a.id)}`),
                  ),
              );
              return h('li', { 'data-app': a.id }, h('a', { href: href({ page: 'app-info', app: a.id }) }, a.name), unlink);
            }),
          )
        : h('p', { class: 'empty' }, 'No application linked.'),
    );
  };
  await draw();
}
