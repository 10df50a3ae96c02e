import { command } from '../command.js';
import type { CronJobView, CronRunView } from '../../shared/api-types.js';
import { APP_OPTIONS, resolveAppOption } from '../app-options.js';
import { printTable } from '../output.js';

const time = (iso: string | null) => (iso ? `${iso.slice(0, 16).replace('T', ' ')} UTC` : '');

/** "2026-11-26 12:01 UTC, 1.2 s, exit 0" (or what became of it). */
function describeRun(run: CronRunView | null, running: boolean): string {
  if (!run) return running ? 'running' : 'never';
  if (run.outcome === 'running') return `${time(run.started_at)}, running`;
  const duration = run.duration_ms === null ? '' : `, ${(run.duration_ms / 1000).toFixed(1)} s`;
  const end = run.exit_code !== null ? `exit ${run.exit_code}` : run.outcome;
  return `${time(run.started_at)}${duration}, ${end}${run.outcome === 'timed-out' ? ' (time limit)' : ''}`;
}

export const cron = command({
  path: ['cron'],
  summary: "List the application's cron jobs (clevercloud/cron.json) with their schedule, last run and next run",
  usage: 'cron [--app <app>] [--format human|json]',
  options: { ...APP_OPTIONS },
  args: { min: 0, max: 0 },
  examples: ['slipway cron', 'slipway cron --format json'],
  printsData: true,
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    const { jobs } = await ctx.client().request<{ jobs: CronJobView[] }>('GET', `/v1/apps/${app.id}/cron`);
    const rows = jobs.map((job) => ({
      name: job.name,
      schedule: job.schedule,
      command: job.command,
      last_run: describeRun(job.last_run, job.running),
      next_run: job.next_run ? time(job.next_run) : 'stopped',
    }));
    printTable(ctx, rows, ['name', 'schedule', 'last_run', 'next_run', 'command'], jobs);
  },
});
