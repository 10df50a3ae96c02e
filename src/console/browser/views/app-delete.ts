import { ApiError, enc, type App } from '../api.js';
import { errorBox, field, h, replaceChildren } from '../dom.js';
import { href } from '../routes.js';
import { pageTitle, type ViewContext } from '../view.js';

/**
 * Deleting an application, confirmed by typing its name as `slipway delete` asks: nothing is
 * sent until the name matches. Afterwards the page says what went and what stayed.
 */
export function deleteCard(ctx: ViewContext, app: App): HTMLElement {
  const name = field(
    `Type ${app.name} to confirm`,
    h('input', { type: 'text', id: 'delete-confirm', autocomplete: 'off', spellcheck: 'false', class: 'mono' }),
    'This stops every instance and worker and removes its routes, domain, repository, releases, caches and user. Its add-ons stay.',
  );
  const problem = errorBox();
  const submit = h('button', { type: 'submit', class: 'danger' }, 'Delete application');
  const form = h('form', { class: 'inline-form', novalidate: true }, name.wrapper, submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    problem.show(undefined);
    if (name.control.value.trim() !== app.name) {
      name.setError(`Type the application's name, ${app.name}, exactly: nothing was deleted.`);
      name.control.focus();
      return;
    }
    name.setError(undefined);
    submit.disabled = true;
    try {
      await ctx.api.json('DELETE', `/v1/apps/${enc(app.id)}`);
    } catch (error) {
      submit.disabled = false;
      problem.show(`Nothing was deleted: ${(error as Error).message}`, error instanceof ApiError ? error.hint : null);
      return;
    }
    replaceChildren(
      ctx.main,
      pageTitle(`${app.name} deleted`),
      h(
        'div',
        { class: 'outcome', 'data-kind': 'ok', role: 'status' },
        h('p', {}, `The application ${app.name} (${app.id}) was deleted. Its name is free again; its add-ons stay.`),
      ),
      h('p', {}, h('a', { href: href({ page: 'home' }) }, 'Back to the organisations')),
    );
    ctx.main.querySelector<HTMLElement>('h1')?.focus();
    ctx.announce(`${app.name} deleted.`);
  });
  return h(
    'section',
    { class: 'card danger-zone', 'aria-labelledby': 'delete-title' },
    h('h2', { id: 'delete-title' }, 'Delete the application'),
    form,
    problem.el,
  );
}
