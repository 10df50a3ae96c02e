import { route } from '../route-spec.js';
import { arr, bool, mapOf, obj, str } from '../schema.js';
import { APP_PARAM } from './apps-routes.js';

const Command = obj(
  {
    label: str('Printed before the command runs'),
    argv: arr(str(), 'Program and arguments, run without a shell'),
    cwd: str('Folder relative to the build folder'),
    env: mapOf(str(), 'Variables for this command only'),
    written: obj(
      { command: str('The command as the user wrote it'), source: str('Where it was written (scripts.start in package.json)') },
      [],
      "What the printed plan shows when argv wraps the command in slipway's own plumbing",
    ),
  },
  ['cwd', 'env', 'written'],
);

/** A build plan as data: what a deployment of the commit would run. */
export const PlanView = obj({
  provider: str('The runtime (node, sbt)'),
  toolchain: arr(obj({ name: str(), version: str('Exact version'), reason: str('Why this version') })),
  env: mapOf(str(), 'Variables added to the build and the instances'),
  files: arr(obj({ path: str('Relative to the build folder'), secret: bool('Removed before the app starts; its content is never shown') })),
  build: arr(Command),
  before_start: arr(Command),
  start: Command,
  cache_dirs: arr(str(), 'Kept between builds'),
  warnings: arr(str()),
  notes: arr(str(), 'Why each choice was made'),
});

export const planRoutes = {
  plan: route({
    route: 'GET /v1/apps/:app/plan',
    operationId: 'getPlan',
    tag: 'Deployments',
    summary: 'The build plan a deployment of a pushed commit would make with the current variables, without deploying',
    params: APP_PARAM,
    query: {
      commit: {
        schema: str(undefined, { pattern: '^[0-9a-f]{4,40}$' }),
        description: 'A pushed commit (default: the head of master)',
        expects: '4 to 40 hexadecimal digits',
      },
    },
    success: {
      status: 200,
      response: {
        description: 'The plan as data and as the deploy log prints it',
        schema: obj({ commit: str('The full commit id'), plan: PlanView, lines: arr(str()) }),
      },
    },
    errors: [400, 404, 422, 503],
  }),
};
