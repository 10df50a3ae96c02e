import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { SlipwayError } from '../../core/errors.js';
import { listRuntimes } from '../../toolchains/runtimes-list.js';
import { runtimeRoutes } from './runtimes-routes.js';

/**
 * The Node.js and Bun versions a build can ask for (docs/behaviour.md, Versions), from the daemon's version
 * catalog (the npm registry, cached): newest first, end-of-life and default versions marked.
 */
export function runtimeHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(runtimeRoutes.list, async ({ deps }) => {
    const catalog = deps.services?.catalog;
    if (!catalog)
      throw new SlipwayError(503, 'unavailable', 'The list of runtimes is not available on this daemon (it runs no deploy pipeline).');
    try {
      const runtimes = await listRuntimes(catalog);
      return {
        runtimes: runtimes.map((r) => ({ runtime: r.runtime, version: r.version, end_of_life: r.endOfLife, default: r.isDefault })),
      };
    } catch (error) {
      throw new SlipwayError(
        502,
        'catalog_unavailable',
        `Could not list the runtime versions: ${(error as Error).message}`,
        'The daemon lists versions from the npm registry it is configured with; check that the machine reaches it.',
      );
    }
  });
}
