import { ApiError, type App, type Org } from '../api.js';
import { errorBox, field, h, replaceChildren, select } from '../dom.js';
import { href, type Route } from '../routes.js';
import { pageTitle, type ViewContext } from '../view.js';

/** Which field an API validation message is about, so the error shows beside it. */
export function fieldOfError(message: string): 'name' | 'type' | 'region' | 'org' | undefined {
  if (/application name|field "name"/i.test(message)) return 'name';
  if (/application type|field "type"/i.test(message)) return 'type';
  if (/region|field "region"/i.test(message)) return 'region';
  if (/organisation|field "org"/i.test(message)) return 'org';
  return undefined;
}

/** Creates an application: type, name, region and organisation (docs/behaviour.md, Applications). */
export async function createAppView(ctx: ViewContext, route: Extract<Route, { page: 'create-app' }>): Promise<void> {
  // The types are the daemon's runtime providers: it says which there are.
  const [{ orgs }, { types }] = await Promise.all([
    ctx.api.get<{ orgs: Org[] }>('/v1/orgs'),
    ctx.api.get<{ types: Array<{ name: string; label: string }> }>('/v1/app-types'),
  ]);
  const fields = {
    org: field(
      'Organisation',
      select(
        orgs.map((o) => ({ value: o.id, label: o.name })),
        { name: 'org' },
      ),
    ),
    type: field(
      'Type',
      select(
        types.map((t) => ({ value: t.name, label: `${t.label} (${t.name})` })),
        { name: 'type' },
      ),
    ),
    name: field(
      'Name',
      h('input', { type: 'text', name: 'name', autocomplete: 'off', maxlength: 63 }),
      'Letters, digits, spaces, ".", "_" or "-"; starts with a letter or digit.',
    ),
    region: field(
      'Region',
      select(
        [
          { value: 'par', label: 'Paris (par)' },
          { value: 'mtl', label: 'Montreal (mtl)' },
        ],
        { name: 'region' },
      ),
    ),
  };
  if (route.org && orgs.some((o) => o.id === route.org)) fields.org.control.value = route.org;
  const problem = errorBox();
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Create application');
  const form = h(
    'form',
    { class: 'card narrow', novalidate: true },
    fields.org.wrapper,
    fields.type.wrapper,
    fields.name.wrapper,
    fields.region.wrapper,
    problem.el,
    h('div', { class: 'actions' }, submit, h('a', { class: 'button secondary', href: href({ page: 'home' }) }, 'Cancel')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    for (const f of Object.values(fields)) f.setError(undefined);
    problem.show(undefined);
    submit.disabled = true;
    form.setAttribute('aria-busy', 'true');
    try {
      const { app } = await ctx.api.json<{ app: App }>('POST', '/v1/apps', {
        type: fields.type.control.value,
        name: fields.name.control.value,
        region: fields.region.control.value,
        org: fields.org.control.value,
      });
      ctx.announce(`Application ${app.name} created.`);
      ctx.navigate({ page: 'app-info', app: app.id });
    } catch (error) {
      const message = (error as Error).message;
      const hint = error instanceof ApiError ? error.hint : null;
      const which = fieldOfError(message);
      if (which) {
        fields[which].setError(hint ? `${message} ${hint}` : message);
        fields[which].control.focus();
      } else {
        problem.show(message, hint);
      }
    } finally {
      submit.disabled = false;
      form.removeAttribute('aria-busy');
    }
  });
  replaceChildren(ctx.main, pageTitle('Create an application'), form);
}
