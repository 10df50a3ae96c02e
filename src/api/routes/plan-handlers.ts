import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { appForUser } from '../access.js';
import { NotFoundError, PlanError, SlipwayError } from '../../core/errors.js';
import type { BuildPlan, PlanCommand } from '../../providers/plan.js';
import type { PlanCommandView, PlanView } from '../../shared/api-types.js';
import { planRoutes } from './plan-routes.js';

function commandView(c: PlanCommand): PlanCommandView {
  return {
    label: c.label,
    argv: c.argv,
    ...(c.cwd ? { cwd: c.cwd } : {}),
    ...(c.env ? { env: c.env } : {}),
    ...(c.written ? { written: c.written } : {}),
  };
}

/** The plan as the API shows it: files by path only (a generated .npmrc holds a token). */
export function planView(plan: BuildPlan): PlanView {
  return {
    provider: plan.provider,
    toolchain: plan.toolchain.map((t) => ({ name: t.name, version: t.version, reason: t.reason })),
    env: plan.env,
    files: plan.files.map((f) => ({ path: f.path, secret: f.secret })),
    build: plan.build.map(commandView),
    before_start: plan.beforeStart.map(commandView),
    start: commandView(plan.start),
    cache_dirs: plan.cacheDirs,
    warnings: plan.warnings,
    notes: plan.notes,
  };
}

/** `slipway plan`: what a deployment of a pushed commit would run, without running it. */
export function planHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(planRoutes.plan, async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const services = ctx.deps.services;
    if (!services) throw new SlipwayError(503, 'unavailable', 'Deployments are not available on this daemon.');
    const asked = ctx.query.commit;
    const commit = asked ? await services.repos.resolveCommit(app.id, asked) : await services.repos.head(app.id);
    if (!commit) {
      throw asked
        ? new NotFoundError(
            `No commit ${asked} was pushed to this application.`,
            'Push it first (`slipway deploy` or `git push`), or pick one from `git log`.',
          )
        : new NotFoundError(
            'Nothing was pushed to this application yet.',
            'Push a commit first: `slipway deploy` or `git push <remote> master`.',
          );
    }
    try {
      const { plan, lines, redact } = await services.deployer.planCommit(app, commit);
      // Variables the app marked secret never appear, as in the deploy log.
      return { commit, plan: JSON.parse(redact(JSON.stringify(planView(plan)))), lines };
    } catch (error) {
      if (error instanceof PlanError) throw new SlipwayError(422, 'plan_failed', error.message, error.hint);
      throw error;
    }
  });
}
