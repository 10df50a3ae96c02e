import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { SlipwayError } from '../../core/errors.js';
import { requireAdmin } from '../access.js';
import { systemSpecs } from './system-routes.js';

/**
 * `slipway system stop`: the one way to stop the data plane. The daemon drains and stops it,
 * answers with what it stopped, then exits.
 */
export function systemRoutes(router: HttpRouter<ApiContext>): void {
  router.add('POST', '/v1/system/stop', systemSpecs.stop, async ({ user, deps }) => {
    requireAdmin(user);
    const stop = deps.services?.stopSystem;
    if (!stop) throw new SlipwayError(503, 'unavailable', 'This daemon runs no data plane to stop.');
    return await stop();
  });
}
