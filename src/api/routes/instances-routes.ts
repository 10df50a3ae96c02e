import { route } from '../route-spec.js';
import { int, obj, str, type Schema } from '../schema.js';
import { Scale } from '../schemas.js';
import { APP_PARAM } from './apps-routes.js';
import { FLAVORS } from '../../core/flavors.js';

const COUNT: Schema = { type: ['integer', 'string'], description: 'A whole number from 1 to 40 (digits in a string are accepted)' };

export const instanceRoutes = {
  getScale: route({
    route: 'GET /v1/apps/:app/scale',
    operationId: 'getScale',
    tag: 'Scaling',
    summary: 'Instance count and flavours of the instances and builds, with their memory',
    params: APP_PARAM,
    success: { status: 200, response: { description: 'The scaling', schema: obj({ scale: Scale }) } },
    errors: [404],
  }),
  setScale: route({
    route: 'PUT /v1/apps/:app/scale',
    operationId: 'setScale',
    tag: 'Scaling',
    summary: `Change the scaling: {"flavor"?, "buildFlavor"?, "instances"?, "minInstances"?, "maxInstances"?, "minFlavor"?, "maxFlavor"?, "autoscaling"?, "workers"?, "minWorkers"?, "maxWorkers"?, "disk"?}; flavours (${FLAVORS.map((f) => f.name).join(', ')}; any case) apply at the next deployment or restart, the instance count at once; within a range of instances the autoscaler chooses the count`,
    params: APP_PARAM,
    body: obj(
      {
        flavor: str('Flavour of each instance'),
        buildFlavor: str('Flavour of builds'),
        instances: { ...COUNT, description: `${COUNT.description}: a fixed count (the range's minimum and maximum)` },
        minInstances: {
          ...COUNT,
          description:
            'A whole number from 0 to 40 (digits in a string are accepted): the fewest instances the autoscaler keeps; 0: the app sleeps when idle and its next request wakes it',
        },
        maxInstances: { ...COUNT, description: `${COUNT.description}: the most instances the autoscaler starts (quotas count it)` },
        minFlavor: str('The smallest instance flavour of the range'),
        maxFlavor: str('The largest instance flavour of the range (quotas count it)'),
        autoscaling: str(
          "Overrides of the autoscaler's settings, `key=value,…` (cpu-out, cpu-in, inflight-out, mem-out, mem-in, out-after, in-after, cooldown, idle-after), or `default`",
        ),
        workers: {
          ...COUNT,
          description:
            'A fixed count of worker instances (each runs all the workers; the web instances then run none), 1 to 40, or "default": the workers run beside each instance again',
        },
        minWorkers: { ...COUNT, description: `${COUNT.description}: the fewest worker instances the autoscaler keeps` },
        maxWorkers: {
          ...COUNT,
          description: `${COUNT.description}: the most worker instances the autoscaler starts (quotas count them as instances)`,
        },
        disk: {
          type: ['integer', 'string'],
          description: 'Administrators: the disk budget, in bytes or as a size (512M, 4G); it only grows',
        },
      },
      [
        'flavor',
        'buildFlavor',
        'instances',
        'minInstances',
        'maxInstances',
        'minFlavor',
        'maxFlavor',
        'autoscaling',
        'workers',
        'minWorkers',
        'maxWorkers',
        'disk',
      ],
    ),
    success: {
      status: 200,
      response: {
        description: 'The scaling after the change, with a note when a part of it applies later',
        schema: obj({ scale: Scale, note: str('When the new disk budget applies, if not at once') }, ['note']),
      },
    },
    errors: [403, 404, 409],
  }),
  setInstances: route({
    route: 'PUT /v1/apps/:app/instances',
    operationId: 'setInstanceCount',
    tag: 'Scaling',
    summary: 'Change how many instances serve the running release, at once',
    params: APP_PARAM,
    body: obj({ count: COUNT }),
    success: {
      status: 200,
      response: { description: 'The count wanted and the instances running', schema: obj({ instances: int(), running: int() }) },
    },
    errors: [404, 503],
  }),
};
