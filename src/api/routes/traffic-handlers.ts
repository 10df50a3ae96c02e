import type { HttpRouter } from '../http-router.js';
import type { ApiContext, ApiRequest } from '../context.js';
import { logRequest, streamLog } from '../../logs/log-response.js';
import { SlipwayError } from '../../core/errors.js';
import { WINDOW_MINUTES } from '../../traffic/traffic-minutes.js';
import type { TrafficRecorder } from '../../traffic/traffic-recorder.js';
import { appForUser } from '../access.js';
import { trafficRoutes } from './traffic-routes.js';

function traffic(ctx: ApiRequest): TrafficRecorder {
  if (!ctx.deps.traffic) throw new SlipwayError(503, 'unavailable', 'This daemon records no traffic (it runs no router).');
  return ctx.deps.traffic;
}

/** What the router saw of an app: its access log and its last hour, minute by minute. */
export function trafficHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(trafficRoutes.accessLogs, async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const request = logRequest(ctx.query);
    await streamLog(
      ctx.res,
      traffic(ctx).accessLog.hub,
      app.id,
      request,
      () => true,
      () => ({}),
    );
    return undefined;
  });

  router.handle(trafficRoutes.traffic, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    return { window_minutes: WINDOW_MINUTES, minutes: traffic(ctx).minutes.lastHour(app.id) };
  });
}
