import { route } from '../route-spec.js';
import { bool, obj, str } from '../schema.js';
import { Deployment } from '../schemas.js';
import { APP_PARAM } from './apps-routes.js';

export const rollbackRoutes = {
  rollback: route({
    route: 'POST /v1/apps/:app/rollback',
    operationId: 'rollback',
    tag: 'Deployments',
    summary: 'Go back to a kept release (default: the newest one other than the serving one), health-checked, without a rebuild',
    params: APP_PARAM,
    body: obj({ deployment: str('The OK deployment whose release to serve again') }, ['deployment']),
    success: {
      status: 201,
      response: {
        description: 'The deployment queued and the one it goes back to',
        schema: obj({ deployment: Deployment, rolled_back_to: Deployment }),
      },
    },
    errors: [404, 409, 503],
  }),
  restartCommit: route({
    route: 'POST /v1/apps/:app/restart-commit',
    operationId: 'restartOnCommit',
    tag: 'Deployments',
    summary: 'Deploy a pushed commit: its kept release when there is one, else a build',
    params: APP_PARAM,
    body: obj({ commit: str('4 to 40 hexadecimal digits') }),
    success: {
      status: 201,
      response: { description: 'The deployment queued', schema: obj({ deployment: Deployment, rebuild: bool('Whether it builds') }) },
    },
    errors: [404, 503],
  }),
};
