import type { RouteSpec } from '../route-spec.js';
import { arr, int, obj, str } from '../schema.js';

export const systemSpecs = {
  stop: {
    operationId: 'stopSystem',
    tag: 'System',
    summary:
      'Administrators: drain and stop every app, worker, add-on server and the router, then stop the daemon (a plain SIGTERM stops the daemon alone and leaves them serving)',
    success: {
      status: 201,
      response: {
        description: 'What was stopped',
        schema: obj({
          apps: arr(str(), 'Names of the applications whose instances were stopped'),
          instances: int('Instances stopped'),
          addon_servers: arr(str(), 'Add-on providers whose servers were stopped'),
          router: str('What became of the router'),
        }),
      },
    },
    errors: [403, 503],
  },
} satisfies Record<string, RouteSpec>;
