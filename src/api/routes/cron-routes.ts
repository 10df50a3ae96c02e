import { route } from '../route-spec.js';
import { arr, bool, int, named, nullable, obj, oneOf, str, time } from '../schema.js';
import { APP_PARAM } from './apps-routes.js';

const CronRun = named(
  'CronRun',
  obj({
    scheduled_for: time('The schedule time (UTC) the run was for; for missed runs, the first one missed'),
    outcome: oneOf(['running', 'succeeded', 'failed', 'timed-out', 'killed', 'skipped', 'missed']),
    started_at: nullable(time()),
    finished_at: nullable(time()),
    duration_ms: nullable(int()),
    exit_code: nullable(int()),
    detail: nullable(str('How it ended, why it was skipped, how many runs were missed')),
  }),
);

const CronJob = named(
  'CronJob',
  obj({
    name: str('cron-<n>, n its place in clevercloud/cron.json: what its lines in the app log are marked with'),
    line: int('Line of clevercloud/cron.json the job is on'),
    schedule: str('The five cron fields, in UTC'),
    command: str('The command as written ($ROOT is the release folder)'),
    next_run: nullable(time('Null while the application is stopped')),
    running: bool(),
    last_run: nullable(CronRun),
    recent: arr(CronRun, 'Newest first: runs, skipped and missed runs'),
  }),
);

export const cronRoutes = {
  list: route({
    route: 'GET /v1/apps/:app/cron',
    operationId: 'listCronJobs',
    tag: 'Deployments',
    summary: "The cron jobs of the serving release's clevercloud/cron.json: schedule, last run, next run and recent runs",
    params: APP_PARAM,
    success: { status: 200, response: { description: 'The jobs, in file order', schema: obj({ jobs: arr(CronJob) }) } },
    errors: [404, 503],
  }),
};
