import { ApiError, enc, type Addon, type App, type Org, type Provider } from '../api.js';
import { errorBox, field, h, replaceChildren, uniqueId } from '../dom.js';
import { href, type Route } from '../routes.js';
import { pageTitle, type ViewContext } from '../view.js';

/**
 * Add-on creation (docs/behaviour.md, Links): choose a provider and a name, then an Applications screen lists
 * the organisation's applications with a Link toggle each; finishing links the toggled ones.
 */
export async function addonCreateView(ctx: ViewContext, route: Extract<Route, { page: 'addon-create' }>): Promise<void> {
  const [{ org }, { providers }, { apps }] = await Promise.all([
    ctx.api.get<{ org: Org }>(`/v1/orgs/${enc(route.org)}`),
    ctx.api.get<{ providers: Provider[] }>('/v1/addon-providers'),
    ctx.api.get<{ apps: App[] }>(`/v1/apps?org=${enc(route.org)}`),
  ]);

  // Step 1: provider and name.
  const providerError = h('p', { class: 'field-error', id: 'provider-error', hidden: true });
  const providerInputs = providers.map((p, i) => {
    const id = uniqueId('provider');
    const input = h('input', { type: 'radio', name: 'provider', id, value: p.name, checked: i === 0, 'aria-describedby': `${id}-desc` });
    return {
      input,
      el: h(
        'div',
        { class: 'choice' },
        input,
        h('label', { for: id }, h('strong', {}, p.name), h('span', { id: `${id}-desc`, class: 'meta' }, p.description)),
      ),
    };
  });
  const providerSet = h(
    'fieldset',
    { class: 'field', 'aria-describedby': 'provider-error' },
    h('legend', {}, 'Provider'),
    ...providerInputs.map((p) => p.el),
    providerError,
  );
  const name = field(
    'Name',
    h('input', { type: 'text', name: 'name', autocomplete: 'off' }),
    'How you will refer to it, e.g. "orders-db".',
  );
  const next = h('button', { type: 'submit', class: 'primary' }, 'Next: Applications');
  const stepOneTitle = h('h2', { tabindex: -1 }, 'Step 1 of 2: provider and name');
  const stepOne = h(
    'form',
    { class: 'card narrow', novalidate: true },
    stepOneTitle,
    providerSet,
    name.wrapper,
    h('div', { class: 'actions' }, next, h('a', { class: 'button secondary', href: href({ page: 'addons', org: org.id }) }, 'Cancel')),
  );

  // Step 2: the Applications screen.
  const toggles = apps.map((app) => {
    const id = uniqueId('link');
    const input = h('input', { type: 'checkbox', role: 'switch', id, value: app.id });
    return {
      app,
      input,
      el: h(
        'li',
        { 'data-app': app.id },
        h('span', { class: 'app-name' }, h('strong', {}, app.name), h('span', { class: 'meta' }, ` ${app.type} · ${app.region}`)),
        h('span', { class: 'toggle' }, input, h('label', { for: id }, 'Link', h('span', { class: 'visually-hidden' }, ` ${app.name}`))),
      ),
    };
  });
  const problem = errorBox();
  const finish = h('button', { type: 'submit', class: 'primary' }, 'Create add-on');
  const back = h('button', { type: 'button', class: 'secondary' }, 'Back');
  const stepTwoTitle = h('h2', { tabindex: -1 }, 'Step 2 of 2: Applications');
  const stepTwoIntro = h('p', { class: 'help' });
  const stepTwo = h(
    'form',
    { class: 'card narrow', novalidate: true, hidden: true },
    stepTwoTitle,
    stepTwoIntro,
    toggles.length
      ? h('ul', { class: 'toggle-list', 'aria-label': 'Applications' }, ...toggles.map((t) => t.el))
      : h(
          'p',
          { class: 'empty' },
          `${org.name} has no application yet; the add-on can be linked later from an application's Service dependencies.`,
        ),
    problem.el,
    h('div', { class: 'actions' }, finish, back),
  );

  const show = (step: 1 | 2) => {
    stepOne.hidden = step !== 1;
    stepTwo.hidden = step !== 2;
    (step === 1 ? stepOneTitle : stepTwoTitle).focus();
  };

  const chosenProvider = () => providerInputs.find((p) => p.input.checked)?.input.value;

  stepOne.addEventListener('submit', (event) => {
    event.preventDefault();
    providerError.hidden = true;
    name.setError(undefined);
    if (!chosenProvider()) {
      providerError.textContent = 'Choose a provider.';
      providerError.hidden = false;
      return providerInputs[0]?.input.focus();
    }
    if (!name.control.value.trim()) {
      name.setError('Give the add-on a name.');
      return name.control.focus();
    }
    stepTwoIntro.textContent = `Toggle Link on the applications that should receive the variables of ${name.control.value.trim()} (${chosenProvider()}).`;
    show(2);
  });

  back.addEventListener('click', () => show(1));

  stepTwo.addEventListener('submit', async (event) => {
    event.preventDefault();
    problem.show(undefined);
    finish.disabled = true;
    back.disabled = true;
    stepTwo.setAttribute('aria-busy', 'true');
    finish.textContent = 'Creating…';
    const link = toggles.filter((t) => t.input.checked).map((t) => t.app.id);
    try {
      const { addon } = await ctx.api.json<{ addon: Addon }>('POST', '/v1/addons', {
        provider: chosenProvider(),
        name: name.control.value.trim(),
        org: org.id,
        link,
      });
      ctx.announce(
        `Add-on ${addon.name} created${link.length ? ` and linked to ${link.length} application${link.length === 1 ? '' : 's'}` : ''}.`,
      );
      ctx.navigate({ page: 'addons', org: org.id });
    } catch (error) {
      const message = (error as Error).message;
      const hint = error instanceof ApiError ? error.hint : null;
      if (/name/i.test(message) && !/provider/i.test(message)) {
        // A name the API refuses is fixed on the first step.
        show(1);
        name.setError(hint ? `${message} ${hint}` : message);
        name.control.focus();
      } else {
        problem.show(message, hint);
        finish.focus();
      }
    } finally {
      finish.disabled = false;
      back.disabled = false;
      stepTwo.removeAttribute('aria-busy');
      finish.textContent = 'Create add-on';
    }
  });

  replaceChildren(
    ctx.main,
    h(
      'p',
      { class: 'crumbs' },
      h('a', { href: href({ page: 'home' }) }, org.name),
      ' / ',
      h('a', { href: href({ page: 'addons', org: org.id }) }, 'Add-ons'),
      ' / New',
    ),
    pageTitle('Create an add-on'),
    stepOne,
    stepTwo,
  );
}
