import { Api, ApiError } from '../api.js';
import { errorBox, field, h, replaceChildren } from '../dom.js';
import { saveToken } from '../session.js';
import { pageTitle } from '../view.js';

/** Asks for an API token and checks it with the daemon before keeping it. */
export async function signInView(main: HTMLElement, onSignedIn: () => void): Promise<void> {
  const token = field(
    'API token',
    h('input', { type: 'password', name: 'token', autocomplete: 'off', spellcheck: 'false', required: true }),
    'The first start wrote one to admin-token in the daemon’s data folder (`sudo cat /var/lib/slipway/admin-token`); `slipway user create <name>` gives a new user one.',
  );
  const problem = errorBox();
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const form = h('form', { class: 'card narrow', novalidate: true }, token.wrapper, problem.el, h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const value = token.control.value.trim();
    token.setError(undefined);
    problem.show(undefined);
    if (!value) {
      token.setError('Enter your API token.');
      token.control.focus();
      return;
    }
    submit.disabled = true;
    try {
      await new Api(value, () => undefined).get('/v1/me');
      saveToken(value);
      onSignedIn();
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        token.setError('The daemon does not know this token. Check that you copied it whole, or ask an administrator for a new one.');
      } else {
        problem.show((error as Error).message, error instanceof ApiError ? error.hint : null);
      }
      token.control.focus();
    } finally {
      submit.disabled = false;
    }
  });
  replaceChildren(main, pageTitle('Sign in to slipway'), form);
}
