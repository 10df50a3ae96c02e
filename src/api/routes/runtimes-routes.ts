import { route } from '../route-spec.js';
import { arr, obj } from '../schema.js';
import { Runtime } from '../schemas.js';

export const runtimeRoutes = {
  list: route({
    route: 'GET /v1/runtimes',
    operationId: 'listRuntimes',
    tag: 'Runtimes',
    summary: 'The Node.js and Bun versions a build can ask for, newest first, end-of-life and default ones marked',
    success: { status: 200, response: { description: 'The versions', schema: obj({ runtimes: arr(Runtime) }) } },
    errors: [502, 503],
  }),
};
