import type { Command, CommandContext } from '../command.js';
import { resolveApp, type AppSummary } from '../resolve-app.js';
import { git, gitOrFail } from '../git.js';
import { CliError, UsageError } from '../errors.js';
import { waitForDeployment } from '../wait-deployment.js';

const POLICIES = ['error', 'ignore', 'restart', 'rebuild'] as const;
const EXIT_ON = ['deploy-start', 'deploy-end'] as const;

/** The remote that points at the app, added as `slipway` (or `slipway-<alias>`) when missing. */
async function ensureRemote(ctx: CommandContext, app: AppSummary): Promise<string> {
  const listing = await gitOrFail(['remote', '-v'], ctx.cwd, ctx.env, 'Cannot list git remotes');
  const existing = listing
    .split('\n')
    .map((line) => line.split(/\s+/))
    .find(([, url, kind]) => url === app.git_url && kind === '(push)');
  if (existing) return existing[0]!;
  const names = new Set(listing.split('\n').map((line) => line.split(/\s+/)[0]));
  const name = !names.has('slipway') ? 'slipway' : `slipway-${app.name.toLowerCase().replace(/[^a-z0-9-]/g, '-')}`;
  if (names.has(name)) {
    throw new CliError(`The git remote ${name} exists but points elsewhere.`, `Fix it with: git remote set-url ${name} ${app.git_url}`);
  }
  await gitOrFail(['remote', 'add', name, app.git_url], ctx.cwd, ctx.env, 'Cannot add the git remote');
  ctx.err(`Added git remote ${name} -> ${app.git_url}\n`);
  return name;
}

async function findDeploymentFor(ctx: CommandContext, app: AppSummary, commit: string, since: string): Promise<string | undefined> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const { deployments } = await ctx.client().request<{ deployments: Array<{ id: string; commit: string; created_at: string }> }>('GET', `/v1/apps/${app.id}/deployments?limit=5`);
    const found = deployments.find((d) => d.commit === commit && d.created_at >= since);
    if (found) return found.id;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return undefined;
}

export const deploy: Command = {
  path: ['deploy'],
  summary: 'Push the current commit to the application and follow the deployment',
  usage: 'deploy [--app <app>] [--branch <branch>] [--force] [--same-commit-policy error|ignore|restart|rebuild] [--exit-on deploy-start|deploy-end] [--quiet]',
  options: {
    app: { type: 'string' },
    branch: { type: 'string', short: 'b' },
    force: { type: 'boolean', short: 'f' },
    'same-commit-policy': { type: 'string' },
    'exit-on': { type: 'string' },
    quiet: { type: 'boolean', short: 'q' },
  },
  args: { min: 0, max: 0 },
  async run(ctx, _args, options) {
    const policy = (options['same-commit-policy'] as string | undefined) ?? 'error';
    if (!(POLICIES as readonly string[]).includes(policy)) throw new UsageError(`--same-commit-policy must be one of ${POLICIES.join(', ')}.`);
    const exitOn = (options['exit-on'] as string | undefined) ?? 'deploy-end';
    if (!(EXIT_ON as readonly string[]).includes(exitOn)) throw new UsageError(`--exit-on must be one of ${EXIT_ON.join(', ')}.`);
    const app = await resolveApp(ctx, options.app as string | undefined);
    const source = (options.branch as string | undefined) ?? 'HEAD';
    if (!/^[A-Za-z0-9._/-]+$/.test(source) || source.startsWith('-')) throw new UsageError(`Invalid branch ${JSON.stringify(source)}.`);
    const commit = await gitOrFail(['rev-parse', '--verify', `${source}^{commit}`], ctx.cwd, ctx.env, `No commit to deploy at ${source}`, 'Commit your code first: git add . && git commit -m "..."');

    const status = await ctx.client().request<{ release: { commit: string } | null; pushed_commit: string | null }>('GET', `/v1/apps/${app.id}/status`);
    let deploymentId: string | undefined;
    if (status.pushed_commit === commit) {
      const deployed = status.release?.commit === commit;
      if (policy === 'error') {
        throw new CliError(
          `Commit ${commit.slice(0, 12)} was already pushed to ${app.name}${deployed ? ' and is deployed' : ''}.`,
          'Use --same-commit-policy restart (start it again), rebuild (build it again) or ignore.',
        );
      }
      if (policy === 'ignore') {
        ctx.err(`Commit ${commit.slice(0, 12)} is already pushed; nothing to do.\n`);
        return 0;
      }
      const body = policy === 'restart' ? { mode: 'restart' } : { mode: 'rebuild', commit };
      deploymentId = (await ctx.client().request<{ deployment: { id: string } }>('POST', `/v1/apps/${app.id}/deployments`, body)).deployment.id;
      ctx.err(`${policy === 'restart' ? 'Restart' : 'Rebuild'} ${deploymentId} queued.\n`);
    } else {
      const shallow = (await git(['rev-parse', '--is-shallow-repository'], ctx.cwd, ctx.env)).stdout.trim() === 'true';
      const remote = await ensureRemote(ctx, app);
      const since = new Date(Date.now() - 1000).toISOString();
      ctx.err(`Pushing ${commit.slice(0, 12)} to ${remote} (master)...\n`);
      const args = ['push', ...(options.force ? ['--force'] : []), remote, `${commit}:refs/heads/master`];
      const push = await git(args, ctx.cwd, ctx.env, options.quiet ? undefined : (text) => ctx.err(text));
      if (push.code !== 0) {
        throw new CliError(
          'git push failed (its output is above).',
          shallow
            ? 'This is a shallow clone: run `git fetch --unshallow` and deploy again.'
            : /non-fast-forward|fetch first|rejected/.test(push.stderr)
              ? 'The application has commits yours lacks: deploy with --force to replace them.'
              : 'Check that your SSH key is registered (`slipway ssh-keys add`) and that you belong to the app\'s organisation.',
        );
      }
      deploymentId = /deployment (deployment_[0-9a-f-]{36}) queued/.exec(push.stderr)?.[1] ?? (await findDeploymentFor(ctx, app, commit, since));
      if (!deploymentId) throw new CliError('The push went through but no deployment started.', 'See `slipway activity`.');
    }
    if (exitOn === 'deploy-start') {
      ctx.out(`${deploymentId}\n`);
      return 0;
    }
    const { code, state } = await waitForDeployment(ctx, app.id, deploymentId, options.quiet === true);
    if (code === 0) {
      ctx.err(`Deployment ${deploymentId} OK.\n`);
      ctx.out(`${app.url}\n`);
    } else {
      ctx.err(`Deployment ${deploymentId} ended ${state}. See \`slipway logs --deployment-id ${deploymentId}\`.\n`);
    }
    return code;
  },
};
