import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { parseLogQuery, streamLog } from '../../logs/log-response.js';
import { SlipwayError } from '../../core/errors.js';
import { WINDOW_MINUTES } from '../../traffic/traffic-minutes.js';
import type { TrafficRecorder } from '../../traffic/traffic-recorder.js';
import { appForUser } from '../access.js';
import { trafficSpecs } from './traffic-routes.js';

function traffic(ctx: ApiContext): TrafficRecorder {
  if (!ctx.deps.traffic) throw new SlipwayError(503, 'unavailable', 'This daemon records no traffic (it runs no router).');
  return ctx.deps.traffic;
}

/** What the router saw of an app: its access log and its last hour, minute by minute. */
export function trafficRoutes(router: HttpRouter<ApiContext>): void {
  router.add('GET', '/v1/apps/:app/accesslogs', trafficSpecs.accessLogs, async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app!);
    const request = parseLogQuery(ctx.query);
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

  router.add('GET', '/v1/apps/:app/traffic', trafficSpecs.traffic, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app!);
    return { window_minutes: WINDOW_MINUTES, minutes: traffic(ctx).minutes.lastHour(app.id) };
  });
}
