import { route } from '../route-spec.js';
import { arr, obj, oneOf, str } from '../schema.js';
import { EnvList, EnvVar } from '../schemas.js';
import { APP_PARAM } from './apps-routes.js';

const VARIABLE = { ...APP_PARAM, name: 'Variable name' };
const list = { description: "The application's own variables after the change", schema: obj({ env: EnvList }) };

export const envRoutes = {
  list: route({
    route: 'GET /v1/apps/:app/env',
    operationId: 'listEnv',
    tag: 'Environment',
    summary: "The application's own variables; ?all=1 adds every source it receives, strongest first",
    params: APP_PARAM,
    query: {
      all: { schema: oneOf(['0', '1']), description: '1: also the sections (its own, each linked add-on, each linked application)' },
    },
    success: {
      status: 200,
      response: {
        description: 'The variables',
        schema: obj(
          { env: EnvList, sections: arr(obj({ source: str('application, add-on <name> or application <name>'), env: EnvList })) },
          ['sections'],
        ),
      },
    },
    errors: [404],
  }),
  replace: route({
    route: 'PUT /v1/apps/:app/env',
    operationId: 'replaceEnv',
    tag: 'Environment',
    summary: 'Replace every variable at once (nothing is written unless every entry is valid)',
    params: APP_PARAM,
    body: obj({ env: arr(EnvVar, 'The whole new set') }),
    success: { status: 200, response: list },
    errors: [404],
  }),
  set: route({
    route: 'PUT /v1/apps/:app/env/:name',
    operationId: 'setEnvVar',
    tag: 'Environment',
    summary: 'Set one variable',
    params: VARIABLE,
    body: obj({ value: str('May span several lines') }),
    success: { status: 200, response: list },
    errors: [404],
  }),
  remove: route({
    route: 'DELETE /v1/apps/:app/env/:name',
    operationId: 'removeEnvVar',
    tag: 'Environment',
    summary: 'Remove one variable',
    params: VARIABLE,
    success: { status: 200, response: list },
    errors: [404],
  }),
};
