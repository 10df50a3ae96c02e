import { ApiError, enc, type EnvSection, type EnvVar } from '../api.js';
import { errorBox, field, h, replaceChildren } from '../dom.js';
import { EnvDraft, type EnvRow } from '../env-changes.js';
import { checkEnvName, checkEnvValue } from '../../../core/names.js';
import type { Route } from '../routes.js';
import type { ViewContext } from '../view.js';
import { appFrame } from './app-frame.js';

const STATE_LABEL: Record<EnvRow['state'], string> = { saved: '', added: 'new', changed: 'changed', removed: 'to remove' };

const SHOWN_CHARS = 200;

/** Long values (certificates, JSON) are cut on screen; they are saved whole. */
function shorten(value: string): string {
  return value.length > SHOWN_CHARS ? `${value.slice(0, SHOWN_CHARS)}… (${value.length} characters)` : value;
}

/** The message and hint of a rule the name or value breaks, or undefined when it is fine. */
function problemOf(check: () => unknown): string | undefined {
  try {
    check();
    return undefined;
  } catch (error) {
    const hint = (error as { hint?: string }).hint;
    return hint ? `${(error as Error).message} ${hint}` : (error as Error).message;
  }
}

/**
 * Environment variables (docs/behaviour.md, Variables): a name and a value, Add puts them on the pending list,
 * and "Update changes" saves every pending change together.
 */
export async function appEnvView(ctx: ViewContext, route: Extract<Route, { page: 'app-env' }>): Promise<void> {
  const { app, body } = await appFrame(ctx, route.app, 'app-env');
  const base = `/v1/apps/${enc(app.id)}/env`;
  const loaded = await ctx.api.get<{ env: EnvVar[]; sections?: EnvSection[] }>(`${base}?all=1`);
  let draft = new EnvDraft(loaded.env);

  const rule =
    app.type === 'sbt'
      ? 'Letters, digits, "_", "-" and "."; not starting with a digit.'
      : 'Letters, digits and "_"; not starting with a digit (e.g. MY_SETTING).';
  const name = field(
    'Variable name',
    h('input', { type: 'text', name: 'name', autocomplete: 'off', spellcheck: 'false', class: 'mono' }),
    rule,
  );
  const value = field(
    'Variable value',
    h('input', { type: 'text', name: 'value', autocomplete: 'off', spellcheck: 'false', class: 'mono' }),
  );
  const addForm = h(
    'form',
    { class: 'add-var', novalidate: true, 'aria-label': 'Add a variable' },
    name.wrapper,
    value.wrapper,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'secondary' }, 'Add')),
  );

  const table = h('div', { class: 'var-list' });
  const summary = h('p', { class: 'pending-summary', role: 'status' });
  const saveProblem = errorBox();
  const update = h('button', { type: 'button', class: 'primary', id: 'update-changes' }, 'Update changes');
  const discard = h('button', { type: 'button', class: 'secondary' }, 'Discard changes');

  const draw = () => {
    const rows = draft.rows();
    const count = draft.changeCount();
    summary.textContent =
      count === 0 ? 'No pending changes.' : `${count} pending change${count === 1 ? '' : 's'}: "Update changes" saves them all together.`;
    discard.hidden = count === 0;
    if (!rows.length) {
      replaceChildren(table, h('p', { class: 'empty' }, 'No variables yet.'));
      return;
    }
    replaceChildren(
      table,
      h(
        'table',
        {},
        h('caption', { class: 'visually-hidden' }, `Variables of ${app.name}`),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, 'Name'),
            h('th', { scope: 'col' }, 'Value'),
            h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')),
          ),
        ),
        h(
          'tbody',
          {},
          ...rows.map((row) => {
            const action =
              row.state === 'saved'
                ? h('button', { type: 'button', class: 'link-button', 'aria-label': `Remove ${row.name}` }, 'Remove')
                : h('button', { type: 'button', class: 'link-button', 'aria-label': `Undo the change to ${row.name}` }, 'Undo');
            action.addEventListener('click', () => {
              if (row.state === 'saved') draft.remove(row.name);
              else draft.undo(row.name);
              draw();
              ctx.announce(
                row.state === 'saved' ? `${row.name} will be removed when you update changes.` : `Change to ${row.name} undone.`,
              );
              name.control.focus();
            });
            return h(
              'tr',
              { class: `row-${row.state}`, 'data-name': row.name, 'data-state': row.state },
              h(
                'th',
                { scope: 'row' },
                h('code', {}, row.name),
                STATE_LABEL[row.state] ? h('span', { class: `badge pending-${row.state}` }, STATE_LABEL[row.state]) : null,
              ),
              h(
                'td',
                {},
                h('code', { class: 'value' }, shorten(row.value)),
                row.savedValue !== undefined ? h('span', { class: 'meta' }, ` (was ${shorten(row.savedValue)})`) : null,
              ),
              h('td', { class: 'row-actions' }, action),
            );
          }),
        ),
      ),
    );
  };

  addForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const n = name.control.value.trim();
    const v = value.control.value;
    // The same rules as the API (src/core/names.ts), so the error shows before anything is sent.
    const nameProblem = problemOf(() => checkEnvName(n, app.type));
    const valueProblem = nameProblem ? undefined : problemOf(() => checkEnvValue(n, v));
    name.setError(nameProblem);
    value.setError(valueProblem);
    if (nameProblem) return name.control.focus();
    if (valueProblem) return value.control.focus();
    const what = draft.set(n, v);
    draw();
    name.control.value = '';
    value.control.value = '';
    name.control.focus();
    ctx.announce(
      what === 'unchanged' ? `${n} already has this value.` : `${n} ${what === 'added' ? 'added to' : 'changed in'} the pending changes.`,
    );
  });

  update.addEventListener('click', async () => {
    saveProblem.show(undefined);
    const count = draft.changeCount();
    if (count === 0) {
      ctx.announce('Nothing to save: add, change or remove a variable first.');
      summary.textContent = 'Nothing to save: add, change or remove a variable first.';
      return;
    }
    update.disabled = true;
    try {
      const saved = await ctx.api.json<{ env: EnvVar[] }>('PUT', base, { env: draft.result() });
      draft = new EnvDraft(saved.env);
      draw();
      summary.textContent = `Saved ${count} change${count === 1 ? '' : 's'}. They reach running instances on the next deployment or restart.`;
    } catch (error) {
      saveProblem.show(`Nothing was saved: ${(error as Error).message}`, error instanceof ApiError ? error.hint : null);
      update.focus();
    } finally {
      update.disabled = false;
    }
  });

  discard.addEventListener('click', () => {
    draft.discard();
    draw();
    ctx.announce('Pending changes discarded.');
    name.control.focus();
  });

  const others = (loaded.sections ?? []).filter((s) => s.env.length && !/^(app|own|application)$/i.test(s.source));
  replaceChildren(
    body,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'own-vars' },
      h('h2', { id: 'own-vars' }, 'Variables of this application'),
      table,
      addForm,
      h('div', { class: 'update-bar' }, summary, saveProblem.el, h('div', { class: 'actions' }, update, discard)),
    ),
    others.length
      ? h(
          'section',
          { class: 'card', 'aria-labelledby': 'other-vars' },
          h('h2', { id: 'other-vars' }, 'From add-ons and linked applications'),
          h(
            'p',
            { class: 'help' },
            "Read-only here: they come from the services this application is linked to. When a name is set twice, the application's own variable wins over an add-on's, and an add-on's over a linked application's.",
          ),
          ...others.map((s) =>
            h(
              'div',
              { class: 'env-section' },
              h('h3', {}, s.source),
              h(
                'dl',
                { class: 'details' },
                ...s.env.flatMap((v) => [h('dt', {}, h('code', {}, v.name)), h('dd', {}, h('code', { class: 'value' }, shorten(v.value)))]),
              ),
            ),
          ),
        )
      : null,
  );
  draw();
}
