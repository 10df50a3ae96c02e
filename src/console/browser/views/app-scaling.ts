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
 * Scaling: how many instances serve the app (applied at once, as `slipway scale --instances`),
 * up to how many the autoscaler may take it (`--min-instances`/`--max-instances`), and the
 * flavour of each (applied at the next deployment or restart, which the page offers), with the
 * instances running now and the autoscaler's last decisions.
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
      min: 0,
      max: MAX_INSTANCES,
      step: 1,
      inputmode: 'numeric',
      value: scale.instances,
      required: true,
    }),
    `From 1 to ${MAX_INSTANCES}; applies at once: new instances are health-checked before they receive traffic. With autoscaling, the fewest instances: 0 lets the app sleep when idle (its next request waits for it to start).`,
  );
  const upTo = field(
    'Autoscale up to',
    h('input', {
      type: 'number',
      id: 'max-instances',
      min: 1,
      max: MAX_INSTANCES,
      step: 1,
      inputmode: 'numeric',
      value: scale.max_instances,
    }),
    'The most instances the autoscaler starts when the load needs them (quotas count this); the instance count for a fixed count.',
  );
  // While the autoscaler chooses, the count field holds the range's minimum.
  count.control.value = String(scale.min_instances);
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
  const form = h('form', { novalidate: true }, count.wrapper, upTo.wrapper, flavor.wrapper, h('div', { class: 'actions' }, save, restart));
  const autoscaling = h('div', { class: 'meta', id: 'autoscaling' });
  const drawAutoscaling = (now: Scale) => {
    const range =
      now.min_instances === now.max_instances
        ? `A fixed count of ${now.instances}.`
        : `${now.asleep_since ? `Asleep since ${now.asleep_since.slice(0, 19).replace('T', ' ')} (wakes to ${now.instances} at its next request)` : `${now.instances} now`}; the autoscaler chooses from ${now.min_instances} to ${now.max_instances}.${now.sleeps === false ? ' It never sleeps: it has workers.' : ''}`;
    replaceChildren(
      autoscaling,
      h('p', {}, range),
      ...now.decisions
        .slice(0, 3)
        .map((d) =>
          h(
            'p',
            { class: 'decision' },
            `${d.at.slice(0, 19).replace('T', ' ')}: ${d.from_flavor && d.to_flavor ? `${d.from_flavor} → ${d.to_flavor}` : `${d.from} → ${d.to} instances`}: ${d.reason}${d.outcome === 'failed' ? ' (failed)' : ''}`,
          ),
        ),
    );
  };
  drawAutoscaling(scale);
  let saved = scale;

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const raw = count.control.value.trim();
    const wanted = Number(raw);
    const rawMaxFirst = upTo.control.value.trim();
    // 0 is a minimum only (scale to zero): it needs a larger "up to".
    const lowest = rawMaxFirst !== '' && Number(rawMaxFirst) > 0 ? 0 : 1;
    if (!/^\d+$/.test(raw) || wanted < lowest || wanted > MAX_INSTANCES) {
      count.setError(
        `The instance count is a whole number from ${lowest} to ${MAX_INSTANCES} (0 with an "up to" of 1 or more: the app sleeps when idle).`,
      );
      count.control.focus();
      return;
    }
    count.setError(undefined);
    const rawMax = upTo.control.value.trim();
    const most = rawMax === '' ? wanted : Number(rawMax);
    if (!/^\d*$/.test(rawMax) || most > MAX_INSTANCES) {
      upTo.setError(`The most instances is a whole number up to ${MAX_INSTANCES}.`);
      upTo.control.focus();
      return;
    }
    upTo.setError(undefined);
    const change: { instances?: number; minInstances?: number; maxInstances?: number; flavor?: string } = {};
    // Up to no more than the count: a fixed count.
    if (most > wanted) {
      if (wanted !== saved.min_instances || most !== saved.max_instances)
        Object.assign(change, { minInstances: wanted, maxInstances: most });
    } else if (wanted !== saved.instances || saved.min_instances !== saved.max_instances) change.instances = wanted;
    if (flavor.control.value !== saved.flavor) change.flavor = flavor.control.value;
    if (change.instances === undefined && change.maxInstances === undefined && !change.flavor) {
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
          drawAutoscaling(now);
          upTo.control.value = String(now.max_instances);
          const parts = change.maxInstances
            ? [`${now.min_instances} to ${now.max_instances} instances of ${now.flavor}, the autoscaler choosing from its measured load`]
            : [`${now.instances} instance${now.instances === 1 ? '' : 's'} of ${now.flavor}`];
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
    const [status, { scale: now }] = await Promise.all([
      ctx.api.get<AppStatus>(`${base}/status`),
      ctx.api.get<{ scale: Scale }>(`${base}/scale`),
    ]);
    if (ctx.signal.aborted) return;
    // The autoscaler's count and decisions as they come; the form keeps what is being typed.
    drawAutoscaling(now);
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
      autoscaling,
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
