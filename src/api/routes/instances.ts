import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { appForUser } from '../access.js';
import { SlipwayError, ValidationError } from '../../core/errors.js';

export const MAX_INSTANCES = 40;

/** Parses an instance count: a whole number from 1 to MAX_INSTANCES. */
export function checkInstanceCount(value: unknown): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_INSTANCES) {
    throw new ValidationError(`The instance count is a whole number from 1 to ${MAX_INSTANCES}, not ${JSON.stringify(value)}.`, 'For example: slipway scale --instances 3');
  }
  return n;
}

/** How many instances serve an app; a change applies at once to the running release. */
export function instanceRoutes(router: HttpRouter<ApiContext>): void {
  router.add('PUT', '/v1/apps/:app/instances', async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app!);
    const count = checkInstanceCount((await ctx.body()).count);
    const runtime = ctx.deps.services?.runtime;
    if (!runtime) throw new SlipwayError(503, 'unavailable', 'Instances are not available on this daemon.');
    ctx.deps.store.apps.setInstances(app.id, count);
    await runtime.scale(app, (line) => ctx.deps.services?.logs.append(app.id, 'system', line));
    return { instances: count, running: runtime.instancesOf(app.id).length };
  });
}
