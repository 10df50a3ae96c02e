import { enc, type AppStatus, type Deployment, type Scale } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import type { Route } from '../routes.js';
import { every, type ViewContext } from '../view.js';
import { humanSize } from '../../../shared/human-size.js';
import { appFrame } from './app-frame.js';
import { actionOutcome } from './action-outcome.js';
import { scalingFields } from './scaling-fields.js';
import { scaleRequest } from '../scale-request.js';
import { decisionLine, instancesSummary, savedMessage, workersSummary } from '../scale-text.js';

const REFRESH_MS = 2000;

/**
 * Scaling: how many instances serve the app (applied at once, as `slipway scale --instances`),
 * up to how many the autoscaler may take it (`--min-instances`/`--max-instances`), the flavour
 * of each or its range (`--flavor`, `--min-flavor`/`--max-flavor`; applied at the next
 * deployment or restart, which the page offers), and where the workers run (beside each
 * instance, or in worker instances of their own: `--workers`, `--min-workers`/`--max-workers`),
 * with the instances running now and the autoscaler's last decisions.
 */
export async function appScalingView(ctx: ViewContext, route: Extract<Route, { page: 'app-scaling' }>): Promise<void> {
  const { app, body } = await appFrame(ctx, route.app, 'app-scaling');
  const base = `/v1/apps/${enc(app.id)}`;
  const { scale } = await ctx.api.get<{ scale: Scale }>(`${base}/scale`);

  const fields = scalingFields();
  fields.load(scale);
  const outcome = actionOutcome(ctx, app.id);
  const save = h('button', { type: 'submit', class: 'primary' }, 'Save scaling');
  const restart = h('button', { type: 'button', class: 'secondary' }, 'Restart to apply the flavour and workers');
  const form = h('form', { novalidate: true }, ...fields.elements, h('div', { class: 'actions' }, save, restart));
  const autoscaling = h('div', { class: 'meta', id: 'autoscaling' });
  const drawAutoscaling = (now: Scale) => {
    const workers = workersSummary(now);
    replaceChildren(
      autoscaling,
      h('p', {}, instancesSummary(now)),
      workers ? h('p', { class: 'workers' }, workers) : null,
      ...now.decisions.slice(0, 3).map((d) => h('p', { class: 'decision' }, decisionLine(d))),
    );
  };
  drawAutoscaling(scale);
  let saved = scale;

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const request = scaleRequest(fields.read(), saved);
    if (!request.ok) {
      fields.showError(request.field, request.message);
      return;
    }
    fields.showError();
    const change = request.body;
    if (Object.keys(change).length === 0) {
      void outcome.run(
        'Scaling',
        async () => saved,
        () => ({ message: 'Nothing to change: this is the scaling already saved.' }),
      );
      return;
    }
    save.disabled = true;
    const before = saved;
    void outcome
      .run(
        'Scaling',
        () => ctx.api.json<{ scale: Scale; note?: string }>('PUT', `${base}/scale`, change),
        ({ scale: now, note }) => {
          saved = now;
          drawAutoscaling(now);
          fields.load(now);
          return { message: savedMessage(change, before, now, note) };
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
    // The autoscaler's count and decisions as they come; the form keeps what is being typed,
    // and the next save compares it with the scaling as it is now.
    saved = now;
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
