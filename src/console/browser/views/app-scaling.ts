import { enc, type AppStatus, type Deployment, type Scale } from '../api.js';
import { field, h, replaceChildren, select } from '../dom.js';
import type { Route } from '../routes.js';
import { every, type ViewContext } from '../view.js';
import { describeFlavor, FLAVORS } from '../../../core/flavors.js';
import { humanSize } from '../../../shared/human-size.js';
import { appFrame } from './app-frame.js';
import { actionOutcome } from './action-outcome.js';

const MAX_INSTANCES = 40;
const REFRESH_MS = 2000;

/**
 * Scaling: how many instances serve the app (applied at once, as `slipway scale --instances`)
 * and the flavour of each (applied at the next deployment or restart, which the page offers),
 * with the instances running now.
 */
export async function appScalingView(ctx: ViewContext, route: Extract<Route, { page: 'app-scaling' }>): Promise<void> {
  const { app, body } = await appFrame(ctx, route.app, 'app-scaling');
  const base = `/v1/apps/${enc(app.id)}`;
  const { scale } = await ctx.api.get<{ scale: Scale }>(`${base}/scale`);

  const count = field(
    'Instance count',
    h('input', {
      type: 'number',
      id: 'instance-count',
      min: 1,
      max: MAX_INSTANCES,
      step: 1,
      inputmode: 'numeric',
      value: scale.instances,
      required: true,
    }),
    `From 1 to ${MAX_INSTANCES}; applies at once: new instances are health-checked before they receive traffic.`,
  );
  const flavor = field(
    'Flavour of each instance',
    select(
      FLAVORS.map((f) => ({ value: f.name, label: describeFlavor(f) })),
      { id: 'instance-flavor' },
    ),
    'Applies at the next deployment or restart.',
  );
  flavor.control.value = scale.flavor;
  const outcome = actionOutcome(ctx, app.id);
  const save = h('button', { type: 'submit', class: 'primary' }, 'Save scaling');
  const restart = h('button', { type: 'button', class: 'secondary' }, 'Restart to apply the flavour');
  const form = h('form', { novalidate: true }, count.wrapper, flavor.wrapper, h('div', { class: 'actions' }, save, restart));
  let saved = scale;

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const raw = count.control.value.trim();
    const wanted = Number(raw);
    if (!/^\d+$/.test(raw) || wanted < 1 || wanted > MAX_INSTANCES) {
      count.setError(`The instance count is a whole number from 1 to ${MAX_INSTANCES}.`);
      count.control.focus();
      return;
    }
    count.setError(undefined);
    const change: { instances?: number; flavor?: string } = {};
    if (wanted !== saved.instances) change.instances = wanted;
    if (flavor.control.value !== saved.flavor) change.flavor = flavor.control.value;
    if (!change.instances && !change.flavor) {
      void outcome.run(
        'Scaling',
        async () => saved,
        () => ({ message: 'Nothing to change: this is the scaling already saved.' }),
      );
      return;
    }
    save.disabled = true;
    void outcome
      .run(
        'Scaling',
        () => ctx.api.json<{ scale: Scale }>('PUT', `${base}/scale`, change),
        ({ scale: now }) => {
          saved = now;
          const parts = [`${now.instances} instance${now.instances === 1 ? '' : 's'} of ${now.flavor}`];
          if (change.instances) parts.push('the instance count applied at once');
          if (change.flavor) parts.push('the flavour applies at the next deployment or restart');
          return { message: `Saved: ${parts.join('; ')}. No deployment was started.` };
        },
      )
      .finally(() => {
        save.disabled = false;
        void drawInstances();
      });
  });
  restart.addEventListener('click', () => {
    void outcome.run(
      'Restart',
      () => ctx.api.json<{ deployment: Deployment }>('POST', `${base}/restart`),
      (a) => ({ message: '', deployment: a.deployment }),
    );
  });

  const instanceRows = h('tbody');
  const instanceSummary = h('p', { class: 'meta' });
  const drawInstances = async () => {
    const status = await ctx.api.get<AppStatus>(`${base}/status`);
    if (ctx.signal.aborted) return;
    instanceSummary.textContent = `${status.instances.length} running of ${status.instance_count} wanted.`;
    replaceChildren(
      instanceRows,
      ...status.instances.map((i) =>
        h(
          'tr',
          { 'data-instance': i.id },
          h('th', { scope: 'row' }, String(i.number)),
          h('td', {}, i.state),
          h('td', {}, String(i.restarts)),
          h('td', {}, i.memory_bytes === null ? '—' : humanSize(i.memory_bytes)),
        ),
      ),
    );
  };

  replaceChildren(
    body,
    h(
      'section',
      { class: 'card narrow', 'aria-labelledby': 'scaling-title' },
      h('h2', { id: 'scaling-title' }, 'Instances and flavour'),
      form,
      outcome.el,
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'running-title' },
      h('h2', { id: 'running-title' }, 'Running instances'),
      instanceSummary,
      h(
        'table',
        { class: 'instance-table', 'aria-labelledby': 'running-title' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, 'Number'),
            h('th', { scope: 'col' }, 'State'),
            h('th', { scope: 'col' }, 'Restarts'),
            h('th', { scope: 'col' }, 'Memory'),
          ),
        ),
        instanceRows,
      ),
    ),
  );
  await drawInstances();
  every(REFRESH_MS, ctx.signal, drawInstances);
}
