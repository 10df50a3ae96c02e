import { command, type CommandContext } from '../command.js';
import type { AppSummary } from '../resolve-app.js';
import { APP_OPTIONS, resolveAppOption } from '../app-options.js';
import { followLog } from '../follow-log.js';
import { git, gitOrFail } from '../git.js';
import { CliError, UsageError } from '../errors.js';
import { waitForDeployment } from '../wait-deployment.js';

const POLICIES = ['error', 'ignore', 'restart', 'rebuild'] as const;
const EXIT_ON = ['deploy-start', 'deploy-end', 'never'] as const;

/** The remote that points at the app, added as `slipway` (or `slipway-<alias>`) when missing; `listing` is `git remote -v`. */
async function ensureRemote(ctx: CommandContext, app: AppSummary, listing: string): Promise<string> {
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
    const { deployments } = await ctx
      .client()
      .request<{ deployments: Array<{ id: string; commit: string; created_at: string }> }>('GET', `/v1/apps/${app.id}/deployments?limit=5`);
    const found = deployments.find((d) => d.commit === commit && d.created_at >= since);
    if (found) return found.id;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return undefined;
}

/** A promise started ahead of its turn: its failure is not unhandled while the turn has not come (it is thrown there). */
function settledLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

const REF_NAME = /^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]+$/;

/** The commit of `--tag`, `--branch` or HEAD, refusing a name git would read as an option. */
async function commitToDeploy(ctx: CommandContext, branch: string | undefined, tag: string | undefined): Promise<string> {
  if (tag !== undefined) {
    if (!REF_NAME.test(tag)) throw new UsageError(`Invalid tag ${JSON.stringify(tag)}.`);
    const found = await git(['rev-parse', '--verify', '--quiet', `refs/tags/${tag}^{commit}`], ctx.cwd, ctx.env);
    if (found.code !== 0) {
      throw new CliError(
        `The tag ${tag} does not exist in this repository.`,
        `Create it with \`git tag ${tag}\` (or fetch it: git fetch --tags), then deploy again.`,
      );
    }
    return found.stdout.trim();
  }
  const source = branch ?? 'HEAD';
  if (!REF_NAME.test(source)) throw new UsageError(`Invalid branch ${JSON.stringify(source)}.`);
  return gitOrFail(
    ['rev-parse', '--verify', `${source}^{commit}`],
    ctx.cwd,
    ctx.env,
    `No commit to deploy at ${source}`,
    'Commit your code first: git add . && git commit -m "..."',
  );
}

export const deploy = command({
  path: ['deploy'],
  summary: 'Push the current commit to the application and follow the deployment',
  usage:
    'deploy [--app <app> | -a <alias>] [--branch <branch> | --tag <tag>] [--force] [--same-commit-policy <policy>] [--exit-on <step>] [--quiet]',
  options: {
    ...APP_OPTIONS,
    branch: {
      type: 'string',
      short: 'b',
      value: '<branch>',
      description: 'Deploy the head of this local branch (default: the current commit, HEAD)',
    },
    tag: {
      type: 'string',
      short: 't',
      value: '<tag>',
      description: 'Deploy the commit of this local tag (create it first with git tag <tag>)',
    },
    force: {
      type: 'boolean',
      short: 'f',
      description: "Replace the application's commits even when yours do not follow them (push --force)",
    },
    'same-commit-policy': {
      type: 'string',
      short: 'p',
      value: '<policy>',
      choices: POLICIES,
      description: 'When the commit is already pushed: error (default), ignore, restart (start it again) or rebuild (build it again)',
    },
    'exit-on': {
      type: 'string',
      short: 'e',
      value: '<step>',
      choices: EXIT_ON,
      description:
        "When to return: deploy-start (print the deployment id once it starts), deploy-end (default: once it is OK or has failed, exit 0 only if OK; what runs after an OK, such as CC_RUN_SUCCEEDED_HOOK, goes on in its log) or never (then follow the application's output until interrupted)",
    },
    quiet: { type: 'boolean', short: 'q', description: "Do not print the deployment's log while waiting" },
  },
  args: { min: 0, max: 0 },
  examples: [
    'slipway deploy',
    'slipway deploy --alias staging --branch feature-x',
    'git tag v1.2.0 && slipway deploy --tag v1.2.0',
    'slipway deploy --same-commit-policy rebuild --exit-on deploy-start',
  ],
  async run(ctx, _args, options) {
    const policy = options['same-commit-policy'] ?? 'error';
    if (!(POLICIES as readonly string[]).includes(policy))
      throw new UsageError(`--same-commit-policy must be one of ${POLICIES.join(', ')}.`);
    const exitOn = options['exit-on'] ?? 'deploy-end';
    if (!(EXIT_ON as readonly string[]).includes(exitOn)) throw new UsageError(`--exit-on must be one of ${EXIT_ON.join(', ')}.`);
    if (options.branch !== undefined && options.tag !== undefined) throw new UsageError('Give --branch or --tag, not both.');
    // What does not depend on the app is asked while the API answers: each step waits on a
    // process or a request, and a deploy is a line of them before the push. Errors are still
    // reported in the order the steps are written (the app's first).
    const commitAsked = settledLater(commitToDeploy(ctx, options.branch, options.tag));
    const remotesAsked = settledLater(gitOrFail(['remote', '-v'], ctx.cwd, ctx.env, 'Cannot list git remotes'));
    const app = await resolveAppOption(ctx, options);
    const statusAsked = settledLater(
      ctx.client().request<{ release: { commit: string } | null; pushed_commit: string | null }>('GET', `/v1/apps/${app.id}/status`),
    );
    const commit = await commitAsked;
    const status = await statusAsked;
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
      deploymentId = (await ctx.client().request<{ deployment: { id: string } }>('POST', `/v1/apps/${app.id}/deployments`, body)).deployment
        .id;
      ctx.err(`${policy === 'restart' ? 'Restart' : 'Rebuild'} ${deploymentId} queued.\n`);
    } else {
      const remote = await ensureRemote(ctx, app, await remotesAsked);
      const since = new Date(Date.now() - 1000).toISOString();
      ctx.err(`Pushing ${commit.slice(0, 12)} to ${remote} (master)...\n`);
      const args = ['push', ...(options.force ? ['--force'] : []), remote, `${commit}:refs/heads/master`];
      const push = await git(args, ctx.cwd, ctx.env, options.quiet ? undefined : (text) => ctx.err(text));
      if (push.code !== 0) {
        // Asked only now: a failed push is the one case its answer changes anything.
        const shallow = (await git(['rev-parse', '--is-shallow-repository'], ctx.cwd, ctx.env)).stdout.trim() === 'true';
        throw new CliError(
          'git push failed (its output is above).',
          shallow
            ? 'This is a shallow clone: run `git fetch --unshallow` and deploy again.'
            : /non-fast-forward|fetch first|rejected/.test(push.stderr)
              ? 'The application has commits yours lacks: deploy with --force to replace them.'
              : "Check that your SSH key is registered (`slipway ssh-keys add`) and that you belong to the app's organisation.",
        );
      }
      deploymentId =
        /deployment (deployment_[0-9a-f-]{36}) queued/.exec(push.stderr)?.[1] ?? (await findDeploymentFor(ctx, app, commit, since));
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
    if (exitOn === 'never') {
      // What serves now (the new release, or the previous one after a failure) keeps talking.
      ctx.err(`Following the output of ${app.name} (Ctrl-C to stop)...\n`);
      await followLog(ctx, `/v1/apps/${app.id}/logs?lines=0`, { follow: true });
    }
    return code;
  },
});
