import type { App } from '../api.js';
import { enc } from '../api.js';
import type { CronJobView, CronRunView } from '../../../shared/api-types.js';
import { formatTime, h, replaceChildren } from '../dom.js';
import { every, type ViewContext } from '../view.js';

// Runs happen by the minute: a refresh every few seconds shows a run start and end.
const REFRESH_MS = 5000;
const BADGE: Record<CronRunView['outcome'], string> = {
  running: 'state-wip',
  succeeded: 'state-ok',
  failed: 'state-failed',
  'timed-out': 'state-failed',
  killed: 'state-failed',
  skipped: '',
  missed: 'state-failed',
};

function describeRun(run: CronRunView): string {
  const when = formatTime(run.started_at ?? run.scheduled_for);
  if (run.outcome === 'running') return `${when}, running`;
  if (!run.started_at) return `${when}: ${run.outcome}`;
  const duration = run.duration_ms === null ? '' : `, ${(run.duration_ms / 1000).toFixed(1)} s`;
  return `${when}${duration}, ${run.exit_code !== null ? `exit ${run.exit_code}` : run.outcome}`;
}

/** One mark per outcome: the row of recent runs stays narrow; each mark's label says the rest. */
const MARK: Record<CronRunView['outcome'], string> = {
  running: '…',
  succeeded: '✓',
  failed: '✗',
  'timed-out': '✗',
  killed: '✗',
  skipped: '»',
  missed: '!',
};

/** The job's recent runs, oldest to newest, one badge each: a failing job is seen at a glance. */
function recentRuns(job: CronJobView): HTMLElement {
  return h(
    'ol',
    {
      class: 'cron-runs',
      'aria-label': `Recent runs of ${job.name}, oldest first`,
      style: 'list-style: none; display: flex; flex-wrap: wrap; gap: 2px; margin: 0; padding: 0',
    },
    ...[...job.recent].reverse().map((run) => {
      const label = `${run.outcome}, due ${formatTime(run.scheduled_for)}${run.detail ? `: ${run.detail}` : ''}`;
      return h(
        'li',
        { class: `badge ${BADGE[run.outcome]}`, 'data-outcome': run.outcome, title: label, 'aria-label': label },
        MARK[run.outcome],
      );
    }),
  );
}

/**
 * The app's cron jobs (docs/behaviour.md, Cron jobs) as `slipway cron` lists them: schedule,
 * command, last run, next run, and the recent runs (skipped and missed ones too).
 */
export function cronCard(ctx: ViewContext, app: App): HTMLElement {
  const body = h('tbody', {});
  const table = h(
    'table',
    { class: 'cron-jobs', 'aria-labelledby': 'cron-title', hidden: true },
    h(
      'thead',
      {},
      h('tr', {}, ...['Job', 'Schedule (UTC)', 'Command', 'Last run', 'Next run', 'Recent runs'].map((t) => h('th', { scope: 'col' }, t))),
    ),
    body,
  );
  const note = h('p', { class: 'meta', role: 'status' });
  const draw = (jobs: CronJobView[]) => {
    table.hidden = jobs.length === 0;
    note.textContent = jobs.length === 0 ? 'No cron jobs: list them in clevercloud/cron.json and deploy.' : '';
    replaceChildren(
      body,
      ...jobs.map((job) =>
        h(
          'tr',
          { 'data-job': job.name },
          h('th', { scope: 'row' }, job.name, h('span', { class: 'meta' }, ` line ${job.line}`)),
          h('td', {}, h('code', {}, job.schedule)),
          h('td', {}, h('code', {}, job.command)),
          h(
            'td',
            { 'data-last-run': job.last_run?.outcome ?? 'never' },
            job.last_run
              ? h('span', { class: `badge ${BADGE[job.last_run.outcome]}`, title: job.last_run.detail ?? '' }, describeRun(job.last_run))
              : 'never',
          ),
          h('td', {}, job.next_run ? formatTime(job.next_run) : 'stopped'),
          h('td', {}, recentRuns(job)),
        ),
      ),
    );
  };
  const refresh = async () => {
    try {
      const { jobs } = await ctx.api.get<{ jobs: CronJobView[] }>(`/v1/apps/${enc(app.id)}/cron`);
      if (!ctx.signal.aborted) draw(jobs);
    } catch (error) {
      if (!ctx.signal.aborted) note.textContent = `The cron jobs could not be read: ${(error as Error).message}`;
    }
  };
  void refresh();
  every(REFRESH_MS, ctx.signal, refresh);
  return h(
    'section',
    { class: 'card', id: 'cron', 'aria-labelledby': 'cron-title' },
    h('h2', { id: 'cron-title' }, 'Cron jobs'),
    table,
    note,
  );
}
