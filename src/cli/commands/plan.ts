import { command, type CommandContext } from '../command.js';
import type { AppSummary } from '../resolve-app.js';
import { APP_OPTIONS, resolveAppOption } from '../app-options.js';
import { CliError, UsageError } from '../errors.js';
import { git } from '../git.js';
import { PLAN_REF } from '../../core/plan-ref.js';
import type { PlanView } from '../../shared/api-types.js';

interface PlanAnswer {
  commit: string;
  plan: PlanView;
  lines: string[];
}

function requestPlan(ctx: CommandContext, app: AppSummary, commit: string | undefined): Promise<PlanAnswer> {
  const query = commit ? `?commit=${commit}` : '';
  return ctx.client().request<PlanAnswer>('GET', `/v1/apps/${encodeURIComponent(app.id)}/plan${query}`);
}

/**
 * Sends a commit the application never received to PLAN_REF, which the receiver stores without
 * deploying: the plan is most useful before the first push.
 */
async function sendForPlanning(ctx: CommandContext, app: AppSummary, commit: string): Promise<void> {
  ctx.err(`Commit ${commit.slice(0, 12)} was never pushed to ${app.name}: sending it to plan it (nothing is deployed).\n`);
  const pushed = await git(['push', '--quiet', app.git_url, `+${commit}:${PLAN_REF}`], ctx.cwd, ctx.env);
  if (pushed.code !== 0) {
    throw new CliError(
      `Could not send commit ${commit.slice(0, 12)} to ${app.name}: ${pushed.stderr.trim() || `git push exited with ${pushed.code}`}`,
      'The plan needs the commit on the platform, sent over git as `slipway deploy` sends it: check your SSH key (`slipway ssh-keys`).',
    );
  }
}

/**
 * The plan the platform would make for a commit, with the app's variables as they are now,
 * printed as the deploy log prints it (or as data with --format json). Nothing is built. A
 * commit of the folder that was never pushed is sent first, without deploying it.
 */
export const plan = command({
  path: ['plan'],
  summary: 'Show the build plan a deployment of the current commit would run, without deploying',
  usage: 'plan [--app <app>] [--commit <commit>]',
  options: {
    ...APP_OPTIONS,
    commit: {
      type: 'string',
      value: '<commit>',
      description: "A commit (default: the folder's HEAD, else the last one pushed); one never pushed is sent, not deployed",
    },
  },
  args: { min: 0, max: 0 },
  examples: ['slipway plan', 'slipway plan --format json', 'slipway plan --commit 1a2b3c4 --app shop'],
  printsData: true,
  async run(ctx, _args, options) {
    let commit = options.commit;
    if (commit !== undefined && !/^[0-9a-f]{4,40}$/.test(commit))
      throw new UsageError(`--commit is "${commit}"; it takes 4 to 40 hexadecimal digits.`);
    const app = await resolveAppOption(ctx, options);
    if (commit === undefined) {
      // The folder's HEAD when it is a git repository; otherwise the daemon plans its last push.
      const head = await git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], ctx.cwd, ctx.env).catch(() => undefined);
      if (head?.code === 0) commit = head.stdout.trim();
    }
    let answer: PlanAnswer;
    try {
      answer = await requestPlan(ctx, app, commit);
    } catch (error) {
      if (!(error instanceof CliError) || error.code !== 'not_found' || commit === undefined) throw error;
      // Not on the platform: when the folder has it, send it and ask again.
      const local = await git(['rev-parse', '--verify', '--quiet', `${commit}^{commit}`], ctx.cwd, ctx.env).catch(() => undefined);
      if (local?.code !== 0) throw error;
      const full = local.stdout.trim();
      await sendForPlanning(ctx, app, full);
      answer = await requestPlan(ctx, app, full);
    }
    if (ctx.format === 'json') {
      ctx.out(`${JSON.stringify({ commit: answer.commit, plan: answer.plan }, null, 2)}\n`);
      return;
    }
    ctx.err(`Plan of commit ${answer.commit.slice(0, 12)} for ${app.name}, with its variables as they are now:\n`);
    ctx.out(`${answer.lines.join('\n')}\n`);
  },
});
