import type { App, AppStatus, Deployment, LogEntry, TrafficMinute } from '../api.js';
import { enc } from '../api.js';
import { formatTime, h, replaceChildren } from '../dom.js';
import { logText } from './log-text.js';
import type { Route } from '../routes.js';
import { every, type ViewContext } from '../view.js';
import { humanSize } from '../../../shared/human-size.js';
import { appFrame } from './app-frame.js';
import { drawTrafficCharts } from './traffic-charts.js';
import { actionOutcome } from './action-outcome.js';
import { deleteCard } from './app-delete.js';
import { notificationsCard } from './app-notifications.js';
import { drainsCard } from './app-drains.js';
import { cronCard } from './app-cron.js';

// Often enough to catch a short deployment while it runs and follow its log live.
const REFRESH_MS = 1000;
// The charts move by the minute: a few redraws a minute keep the current one fresh.
const TRAFFIC_REFRESH_MS = 10_000;

function detail(term: string, ...value: Array<Node | string>): HTMLElement[] {
  return [h('dt', {}, term), h('dd', {}, ...value)];
}

function shortCommit(sha: string | null | undefined): string {
  return sha ? sha.slice(0, 10) : '—';
}

function stateBadge(state: string): HTMLElement {
  return h('span', { class: `badge state-${state.toLowerCase()}` }, state);
}

/** Shows the git URL in a read-only field with a Copy button, so it can be selected whole. */
function gitUrlField(app: App): HTMLElement {
  const input = h('input', {
    type: 'text',
    readonly: true,
    value: app.git_url,
    id: 'git-url',
    'aria-label': 'Git deployment URL',
    class: 'mono',
  });
  const copied = h('span', { class: 'copied', role: 'status' });
  const copy = h('button', { type: 'button', class: 'secondary' }, 'Copy');
  copy.addEventListener('click', async () => {
    input.select();
    try {
      await navigator.clipboard.writeText(app.git_url);
      copied.textContent = 'Copied.';
    } catch {
      copied.textContent = 'Selected: press Ctrl+C to copy.';
    }
  });
  return h('div', { class: 'copy-field' }, input, copy, copied);
}

/**
 * An application's Information page: git URL (docs/behaviour.md, the git remote), status with
 * restart and stop, deployments with their logs and a rollback on each kept release, and deletion.
 */
export async function appInfoView(ctx: ViewContext, route: Extract<Route, { page: 'app-info' }>): Promise<void> {
  const { app, body } = await appFrame(ctx, route.app, 'app-info');
  const base = `/v1/apps/${enc(app.id)}`;

  const statusList = h('dl', { class: 'details' });
  const charts = h('div', { class: 'charts', 'aria-live': 'off' });
  const trafficNote = h('p', { class: 'meta', role: 'status' });
  const restartButton = h('button', { type: 'button', class: 'primary' }, 'Restart');
  const stopButton = h('button', { type: 'button', class: 'secondary' }, 'Stop');
  // The outcome of the page's actions sits under the status, where they are; a rollback's too.
  const outcome = actionOutcome(ctx, app.id, (d) => openLog(d, true, true));
  const deploymentList = h('ul', { class: 'deployments', 'aria-label': 'Deployments' });
  const logTitle = h('h2', { id: 'log-title' }, 'Deployment log');
  const liveBadge = h('span', { class: 'badge live', hidden: true }, 'Live');
  const logLines = h('pre', { class: 'log', role: 'log', 'aria-labelledby': 'log-title', tabindex: 0, 'data-live': 'false' });
  const logEnd = h('p', { class: 'log-end', role: 'status' });
  const logSection = h(
    'section',
    { class: 'card', id: 'log', 'aria-labelledby': 'log-title', hidden: true },
    h('div', { class: 'section-head' }, logTitle, liveBadge),
    logLines,
    logEnd,
  );

  replaceChildren(
    body,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'details-title' },
      h('h2', { id: 'details-title' }, 'Details'),
      h(
        'dl',
        { class: 'details' },
        ...detail('Application id', h('code', {}, app.id)),
        ...detail('Type', app.type),
        ...detail('Region', app.region),
        ...detail('Organisation', app.org_name ?? app.org_id),
        ...detail('Git deployment URL', gitUrlField(app)),
        ...detail('Domain', app.domain),
        ...detail('URL', h('a', { href: app.url, rel: 'noreferrer' }, app.url)),
      ),
      h(
        'p',
        { class: 'help' },
        'Deploy with: ',
        h('code', {}, `git remote add slipway ${app.git_url}`),
        ' then ',
        h('code', {}, 'git push slipway master'),
        '.',
      ),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'status-title' },
      h('h2', { id: 'status-title' }, 'Status'),
      statusList,
      h('div', { class: 'actions' }, restartButton, stopButton),
      outcome.el,
      h(
        'p',
        { class: 'help' },
        'Restart starts the current release again with the current variables, health-checked, without a rebuild. Stop keeps it stopped until the next deployment or restart.',
      ),
    ),
    h(
      'section',
      { class: 'card', id: 'traffic', 'aria-labelledby': 'traffic-title' },
      h('h2', { id: 'traffic-title' }, 'Traffic, last hour'),
      charts,
      trafficNote,
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'deployments-title' },
      h('h2', { id: 'deployments-title' }, 'Deployments'),
      deploymentList,
    ),
    logSection,
    cronCard(ctx, app),
    drainsCard(ctx, app),
    notificationsCard(ctx, app),
    deleteCard(ctx, app),
  );

  let shown: { id: string; live: boolean; stop: AbortController } | undefined;
  let lastDeployments = '';
  let lastDeploymentList: Deployment[] = [];
  let servingDeployment: string | undefined;

  const openLog = (deployment: Deployment, follow: boolean, moveFocus = false) => {
    shown?.stop.abort();
    const stop = new AbortController();
    ctx.signal.addEventListener('abort', () => stop.abort());
    const live = follow && deployment.state === 'WIP';
    shown = { id: deployment.id, live, stop };
    logSection.hidden = false;
    logTitle.textContent = `Log of deployment ${deployment.id}`;
    logLines.replaceChildren();
    logLines.dataset.live = String(live);
    logLines.dataset.deployment = deployment.id;
    liveBadge.hidden = !live;
    logEnd.textContent = live ? 'Deploying: new lines appear as they are written.' : '';
    drawDeployments(lastDeploymentList);
    if (moveFocus) logLines.focus();
    const append = (entry: LogEntry) => {
      const atBottom = logLines.scrollHeight - logLines.scrollTop - logLines.clientHeight < 8;
      logLines.append(h('span', { class: entry.stream === 'stderr' ? 'line stderr' : 'line' }, ...logText(entry.line ?? ''), '\n'));
      if (atBottom) logLines.scrollTop = logLines.scrollHeight;
    };
    ctx.api
      .stream(`${base}/deployments/${enc(deployment.id)}/logs?follow=${live ? 1 : 0}`, append, stop.signal)
      .then((end) => {
        if (stop.signal.aborted) return;
        if (shown?.id === deployment.id) shown.live = false;
        logLines.dataset.live = 'false';
        liveBadge.hidden = true;
        logEnd.textContent = end.state ? `Deployment ${end.state}${end.message ? `: ${end.message}` : '.'}` : '';
        if (live) void refresh();
      })
      .catch((error: Error) => {
        if (stop.signal.aborted) return;
        logLines.dataset.live = 'false';
        liveBadge.hidden = true;
        logEnd.textContent = `The log stopped: ${error.message}`;
      });
  };

  restartButton.addEventListener('click', () => {
    void outcome
      .run(
        'Restart',
        () => ctx.api.json<{ deployment: Deployment }>('POST', `${base}/restart`),
        (a) => ({ message: '', deployment: a.deployment }),
      )
      .then(() => refresh());
  });
  stopButton.addEventListener('click', () => {
    void outcome
      .run(
        'Stop',
        () => ctx.api.json<{ stopped: boolean }>('POST', `${base}/stop`),
        (a) => ({
          message: a.stopped
            ? `Stopped ${app.name}: the router answers 503 until the next deployment or restart. No deployment was started.`
            : `${app.name} was not running.`,
        }),
      )
      .then(() => refresh());
  });
  const rollBack = (target: Deployment) => {
    void outcome
      .run(
        `Rollback to ${shortCommit(target.commit)}`,
        () => ctx.api.json<{ deployment: Deployment }>('POST', `${base}/rollback`, { deployment: target.id }),
        (a) => ({ message: '', deployment: a.deployment }),
      )
      .then(() => refresh());
    restartButton.focus();
  };

  const drawDeployments = (deployments: Deployment[]) => {
    lastDeploymentList = deployments;
    const focusedKey = (document.activeElement as HTMLElement | null)?.dataset?.key;
    if (!deployments.length) {
      replaceChildren(deploymentList, h('li', { class: 'empty' }, 'No deployment yet. Push to the git deployment URL above to deploy.'));
      return;
    }
    replaceChildren(
      deploymentList,
      ...deployments.map((d) => {
        const isShown = shown?.id === d.id;
        const button = h(
          'button',
          { type: 'button', class: 'secondary', 'data-key': `log-${d.id}`, 'aria-controls': 'log', 'aria-pressed': String(isShown) },
          isShown ? 'Log shown' : 'Show log',
        );
        button.addEventListener('click', () => openLog(d, true, true));
        // Each OK deployment whose release is still kept can serve again, without a rebuild.
        const canRollBack = d.release_kept && d.state === 'OK' && d.id !== servingDeployment;
        const rollback = canRollBack
          ? h(
              'button',
              {
                type: 'button',
                class: 'secondary',
                'data-key': `rollback-${d.id}`,
                'aria-label': `Roll back to commit ${shortCommit(d.commit)} (deployment ${d.id})`,
              },
              'Roll back to this release',
            )
          : null;
        rollback?.addEventListener('click', () => rollBack(d));
        return h(
          'li',
          { 'data-deployment': d.id, 'data-state': d.state },
          h(
            'div',
            { class: 'deployment-head' },
            stateBadge(d.state),
            h('code', {}, shortCommit(d.commit)),
            h('span', { class: 'meta' }, d.cause ?? ''),
          ),
          h(
            'p',
            { class: 'meta' },
            `Started ${formatTime(d.created_at)}`,
            d.finished_at ? ` · ended ${formatTime(d.finished_at)}` : d.phase ? ` · ${d.phase}` : '',
          ),
          d.message ? h('p', { class: 'message' }, d.message) : null,
          h(
            'div',
            { class: 'actions' },
            button,
            rollback,
            d.id === servingDeployment ? h('span', { class: 'badge serving' }, 'Serving') : null,
          ),
        );
      }),
    );
    if (focusedKey) deploymentList.querySelector<HTMLElement>(`[data-key="${focusedKey}"]`)?.focus();
  };

  const drawStatus = (status: AppStatus) => {
    replaceChildren(
      statusList,
      ...detail(
        'State',
        h('span', { class: `badge state-${status.status}` }, status.status),
        status.deploying.length ? ' · deploying' : '',
      ),
      ...detail(
        'Instances',
        status.instances.length
          ? h(
              'ul',
              { class: 'instances', 'aria-label': 'Instances' },
              ...status.instances.map((i) =>
                h(
                  'li',
                  {},
                  `#${i.number} ${i.state} at ${i.address} · restarts: ${i.restarts} · ${i.memory_bytes === null ? 'memory unknown' : humanSize(i.memory_bytes)}`,
                ),
              ),
            )
          : `none running (${status.instance_count} wanted)`,
      ),
      ...detail('Release', status.release ? h('code', {}, shortCommit(status.release.commit)) : 'none yet'),
      ...detail('Last pushed commit', status.pushed_commit ? h('code', {}, shortCommit(status.pushed_commit)) : 'nothing pushed yet'),
    );
  };

  const refresh = async () => {
    const [status, { deployments }] = await Promise.all([
      ctx.api.get<AppStatus>(`${base}/status`),
      ctx.api.get<{ deployments: Deployment[] }>(`${base}/deployments?limit=10`),
    ]);
    if (ctx.signal.aborted) return;
    servingDeployment = status.release?.deployment_id;
    drawStatus(status);
    const running = deployments.find((d) => d.state === 'WIP');
    // A deployment that starts while the page is open takes over the log, live.
    if (running && !shown?.live) openLog(running, true);
    else if (!shown && deployments[0]) openLog(deployments[0], false);
    const key = JSON.stringify(deployments) + (shown?.id ?? '') + (servingDeployment ?? '');
    if (key !== lastDeployments) {
      lastDeployments = key;
      drawDeployments(deployments);
    }
  };
  const refreshTraffic = async () => {
    try {
      const { minutes } = await ctx.api.get<{ minutes: TrafficMinute[] }>(`${base}/traffic`);
      if (ctx.signal.aborted) return;
      drawTrafficCharts(charts, minutes);
      const requests = minutes.reduce((n, m) => n + m.requests, 0);
      trafficNote.textContent = requests ? '' : 'No request reached this application through the router in the last hour.';
    } catch (error) {
      if (!ctx.signal.aborted) trafficNote.textContent = `The traffic figures could not be read: ${(error as Error).message}`;
    }
  };
  await Promise.all([refresh(), refreshTraffic()]);
  every(REFRESH_MS, ctx.signal, refresh);
  every(TRAFFIC_REFRESH_MS, ctx.signal, refreshTraffic);
}
