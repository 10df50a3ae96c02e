import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { appForUser } from '../access.js';
import { ConflictError, NotFoundError, SlipwayError, ValidationError } from '../../core/errors.js';
import { deploymentView } from './deployments-handlers.js';
import { parseReleaseSpec } from '../../serving/release-spec.js';
import type { Deployment } from '../../store/deployments.js';
import { releaseKeptOnDisk as keptOnDisk } from '../../pipeline/kept-release.js';
import { rollbackRoutes } from './rollback-routes.js';

/**
 * Rollback to a kept release (no rebuild: start, health check and switch, like a deployment),
 * and a restart on a given commit, which reuses its kept release when there is one.
 */
export function rollbackHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(rollbackRoutes.rollback, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const deployer = ctx.deps.services?.deployer;
    if (!deployer) throw new SlipwayError(503, 'unavailable', 'Deployments are not available on this daemon.');
    const { store } = ctx.deps;
    const wanted = ctx.body.deployment;
    const serving = store.deployments.release(app.id);
    const servingFolder = serving ? parseReleaseSpec(serving.start_json).releaseDir : undefined;
    const candidates = store.deployments.withReleases(app.id);
    let target: Deployment | undefined;
    if (wanted) {
      target = store.deployments.byId(wanted);
      if (!target || target.app_id !== app.id)
        throw new NotFoundError(`No deployment ${wanted} for this application.`, '`slipway activity` lists them.');
      if (target.state !== 'OK' || !target.release_json) {
        throw new ConflictError(
          `Deployment ${wanted} did not end OK, so it has no release to go back to.`,
          'Pick an OK deployment from `slipway activity`.',
        );
      }
    } else {
      // The newest kept release other than the one serving now.
      target = candidates.find((d) => parseReleaseSpec(d.release_json!).releaseDir !== servingFolder && keptOnDisk(d));
      if (!target)
        throw new ConflictError(
          'There is no earlier release to roll back to.',
          'Deploy again, or list deployments with `slipway activity`.',
        );
    }
    if (!keptOnDisk(target)) {
      throw new ConflictError(
        `The release of deployment ${target.id} is no longer kept on disk.`,
        `Redeploy its commit with \`slipway restart --commit ${target.commit_sha}\`, which builds it again.`,
      );
    }
    const deployment = deployer.enqueue(app, {
      commit: target.commit_sha,
      cause: `rollback to deployment ${target.id}`,
      userId: ctx.user.id,
      mode: 'reuse-release',
      releaseOf: target.id,
    });
    return { deployment: deploymentView(deployment), rolled_back_to: deploymentView(target) };
  });

  router.handle(rollbackRoutes.restartCommit, async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const services = ctx.deps.services;
    if (!services) throw new SlipwayError(503, 'unavailable', 'Deployments are not available on this daemon.');
    const { commit } = ctx.body;
    if (!/^[0-9a-f]{4,40}$/.test(commit))
      throw new ValidationError('Give a commit id (4 to 40 hexadecimal digits).', 'For example: slipway restart --commit 1a2b3c4');
    const kept = ctx.deps.store.deployments.withReleases(app.id).find((d) => d.commit_sha.startsWith(commit) && keptOnDisk(d));
    if (kept) {
      const deployment = services.deployer.enqueue(app, {
        commit: kept.commit_sha,
        cause: `restart on commit ${kept.commit_sha}`,
        userId: ctx.user.id,
        mode: 'reuse-release',
        releaseOf: kept.id,
      });
      return { deployment: deploymentView(deployment), rebuild: false };
    }
    const full = await services.repos.resolveCommit(app.id, commit);
    if (!full) throw new NotFoundError(`No commit ${commit} was pushed to this application.`, 'Push it first, or pick one from `git log`.');
    const deployment = services.deployer.enqueue(app, {
      commit: full,
      cause: `restart on commit ${full}`,
      userId: ctx.user.id,
      mode: 'build',
    });
    return { deployment: deploymentView(deployment), rebuild: true };
  });
}
