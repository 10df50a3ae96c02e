import type { Command } from '../command.js';
import { APP_OPTIONS, resolveAppOption } from '../app-options.js';
import { UsageError } from '../errors.js';
import { git } from '../git.js';
import type { PlanView } from '../../shared/api-types.js';

/**
 * The plan the platform would make for a commit, with the app's variables as they are now,
 * printed as the deploy log prints it (or as data with --format json). Nothing is built.
 */
export const plan: Command = {
  path: ['plan'],
  summary: 'Show the build plan a deployment of the current commit would run, without deploying',
  usage: 'plan [--app <app>] [--commit <commit>]',
  options: {
    ...APP_OPTIONS,
    commit: { type: 'string', value: '<commit>', description: "A pushed commit (default: the folder's HEAD, else the last one pushed)" },
  },
  args: { min: 0, max: 0 },
  examples: ['slipway plan', 'slipway plan --format json', 'slipway plan --commit 1a2b3c4 --app shop'],
  printsData: true,
  async run(ctx, _args, options) {
    let commit = options.commit as string | undefined;
    if (commit !== undefined && !/^[0-9a-f]{4,40}$/.test(commit))
      throw new UsageError(`--commit is "${commit}"; it takes 4 to 40 hexadecimal digits.`);
    const app = await resolveAppOption(ctx, options);
    if (commit === undefined) {
      // The folder's HEAD when it is a git repository; otherwise the daemon plans its last push.
      const head = await git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], ctx.cwd, ctx.env).catch(() => undefined);
      if (head?.code === 0) commit = head.stdout.trim();
    }
    const query = commit ? `?commit=${commit}` : '';
    const answer = await ctx
      .client()
      .request<{ commit: string; plan: PlanView; lines: string[] }>('GET', `/v1/apps/${encodeURIComponent(app.id)}/plan${query}`);
    if (ctx.format === 'json') {
      ctx.out(`${JSON.stringify({ commit: answer.commit, plan: answer.plan }, null, 2)}\n`);
      return;
    }
    ctx.err(`Plan of commit ${answer.commit.slice(0, 12)} for ${app.name}, with its variables as they are now:\n`);
    ctx.out(`${answer.lines.join('\n')}\n`);
  },
};
