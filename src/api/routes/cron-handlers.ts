import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { SlipwayError } from '../../core/errors.js';
import { appForUser } from '../access.js';
import { cronRoutes } from './cron-routes.js';

/** docs/behaviour.md, Cron jobs: what `slipway cron` and the console list. */
export function cronHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(cronRoutes.list, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    if (!ctx.deps.cron) throw new SlipwayError(503, 'unavailable', 'This daemon runs no cron jobs.');
    return { jobs: ctx.deps.cron.jobsOf(app.id) };
  });
}
