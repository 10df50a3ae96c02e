import type { AppStatusView, DeploymentView } from '../../shared/api-types.js';
import type { HttpRouter } from '../http-router.js';
import type { ApiContext, ApiRequest } from '../context.js';
import type { Deployment } from '../../store/deployments.js';
import { logRequest, streamLog } from '../../logs/log-response.js';
import { appForUser } from '../access.js';
import { ConflictError, NotFoundError, SlipwayError, ValidationError } from '../../core/errors.js';
import type { DeploymentServices } from '../platform.js';
import { deploymentRoutes } from './deployments-routes.js';
import { releaseKeptOnDisk } from '../../pipeline/kept-release.js';

export function deploymentView(d: Deployment): DeploymentView {
  return {
    id: d.id,
    app_id: d.app_id,
    commit: d.commit_sha,
    state: d.state,
    cause: d.cause,
    phase: d.phase,
    message: d.message,
    created_at: d.created_at,
    finished_at: d.finished_at,
  };
}

function services(ctx: ApiRequest): DeploymentServices {
  if (!ctx.deps.services) throw new SlipwayError(503, 'unavailable', 'Deployments are not available on this daemon.');
  return ctx.deps.services;
}

export function deploymentHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(deploymentRoutes.list, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const limit = Math.min(ctx.query.limit ?? 10, 200);
    // Whether each can be rolled back to without a rebuild: the console offers it on those.
    return {
      deployments: ctx.deps.store.deployments
        .listForApp(app.id, limit)
        .map((d) => ({ ...deploymentView(d), release_kept: releaseKeptOnDisk(d) })),
    };
  });

  router.handle(deploymentRoutes.get, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const d = ctx.deps.store.deployments.byId(ctx.params.deployment);
    if (!d || d.app_id !== app.id)
      throw new NotFoundError(`No deployment ${ctx.params.deployment} for this application.`, '`slipway activity` lists them.');
    return { deployment: deploymentView(d) };
  });

  router.handle(deploymentRoutes.logs, async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const { store } = ctx.deps;
    const d = store.deployments.byId(ctx.params.deployment);
    if (!d || d.app_id !== app.id)
      throw new NotFoundError(`No deployment ${ctx.params.deployment} for this application.`, '`slipway activity` lists them.');
    const request = logRequest(ctx.query);
    await streamLog(
      ctx.res,
      services(ctx).logs,
      d.id,
      request,
      // Queued, or running, or past its outcome with hooks still writing.
      () => store.deployments.byId(d.id)?.state === 'WIP' || services(ctx).logs.isWriting(d.id),
      () => {
        const now = store.deployments.byId(d.id)!;
        return { state: now.state, message: now.message };
      },
    );
    return undefined;
  });

  /** A new deployment of a commit already pushed (rebuild), or of the current release (restart). */
  router.handle(deploymentRoutes.create, async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const { deployer, repos } = services(ctx);
    if (ctx.body.mode === 'restart') return restart(ctx);
    const head = await repos.head(app.id);
    const commit = ctx.body.commit ?? head;
    if (!commit)
      throw new ConflictError(
        'Nothing has been pushed to this application yet.',
        `Push first: git push <remote> master (or \`slipway deploy\`).`,
      );
    if (!/^[0-9a-f]{40}$/.test(commit)) throw new ValidationError('A commit is a 40-character hexadecimal id.');
    const deployment = deployer.enqueue(app, { commit, cause: 'rebuild requested', userId: ctx.user.id, mode: 'build' });
    return { deployment: deploymentView(deployment) };
  });

  const restart = (ctx: ApiRequest & { params: { app: string } }) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const { deployer } = services(ctx);
    const release = ctx.deps.store.deployments.release(app.id);
    if (!release)
      throw new ConflictError(
        'This application has never been deployed, so there is nothing to restart.',
        'Deploy it first with git push or `slipway deploy`.',
      );
    const last = ctx.deps.store.deployments.byId(release.deployment_id)!;
    const deployment = deployer.enqueue(app, {
      commit: last.commit_sha,
      cause: 'restart requested',
      userId: ctx.user.id,
      mode: 'reuse-release',
    });
    return { deployment: deploymentView(deployment) };
  };
  router.handle(deploymentRoutes.restart, restart);

  router.handle(deploymentRoutes.stop, async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const stopped = await services(ctx).runtime.stop(app.id);
    ctx.deps.store.deployments.setWanted(app.id, 'stopped');
    return { stopped };
  });

  router.handle(deploymentRoutes.status, async (ctx): Promise<AppStatusView> => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const { runtime, repos } = services(ctx);
    const { store } = ctx.deps;
    const instance = runtime.current(app.id);
    const release = store.deployments.release(app.id);
    const releaseDeployment = release ? store.deployments.byId(release.deployment_id) : undefined;
    const inProgress = store.deployments
      .listForApp(app.id, 20)
      .filter((d) => d.state === 'WIP')
      .map(deploymentView);
    return {
      status: instance ? 'running' : 'stopped',
      instance: instance
        ? {
            id: instance.id,
            address: instance.address,
            port: instance.port,
            state: instance.state(),
            restarts: instance.restarts(),
            memory_bytes: instance.memoryUsage() ?? null,
          }
        : null,
      instances: runtime.instancesOf(app.id).map((i) => ({
        id: i.id,
        number: i.spec.instanceNumber,
        address: i.address,
        state: i.state(),
        restarts: i.restarts(),
        memory_bytes: i.memoryUsage() ?? null,
        liveness: runtime.livenessOf(i) ?? null,
      })),
      instance_count: store.apps.byId(app.id)?.instances ?? 1,
      asleep_since: store.apps.byId(app.id)?.asleep_since ?? null,
      release: releaseDeployment ? { deployment_id: releaseDeployment.id, commit: releaseDeployment.commit_sha } : null,
      pushed_commit: await repos.head(app.id),
      deploying: inProgress,
    };
  });

  router.handle(deploymentRoutes.appLogs, async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const request = logRequest(ctx.query);
    await streamLog(
      ctx.res,
      services(ctx).logs,
      app.id,
      request,
      () => true,
      () => ({}),
    );
    return undefined;
  });
}
