import { appTypes } from '../providers/registry.js';
import { arr, bool, int, named, nullable, obj, oneOf, str, time, type Schema } from './schema.js';

/** The shapes the API answers with, shared by the routes' declarations (src/api/routes/*-routes.ts). */

export const ErrorBody = named(
  'Error',
  obj({
    error: obj({
      code: str('Stable error code: invalid, unauthorized, forbidden, not_found, conflict, unavailable...'),
      message: str('What happened'),
      hint: nullable(str('What to do next')),
    }),
  }),
);

export const EnvVar = named('EnvVar', obj({ name: str(), value: str() }));
export const EnvList = arr(EnvVar);

export const Org = named('Org', obj({ id: str(), name: str(), created_at: time() }));
export const OrgWithRole = named('OrgWithRole', obj({ id: str(), name: str(), created_at: time(), role: oneOf(['owner', 'member']) }));
export const Member = named('Member', obj({ user_id: str(), name: str(), role: oneOf(['owner', 'member']) }));

export const App = named(
  'App',
  obj({
    id: str('app_<uuid>'),
    name: str(),
    type: oneOf(appTypes().map((t) => t.name)),
    region: oneOf(['par', 'mtl']),
    org_id: str(),
    org_name: nullable(str()),
    created_at: time(),
    git_url: str('Where to git push: git+ssh://git@<host>:<port>/<app_id>.git'),
    domain: str('<app_id>.<domain>'),
    url: str('The address the router serves the app on'),
    instances: int('Instances that serve it', { minimum: 1 }),
    flavor: str('Flavour of each instance'),
    flavor_memory_bytes: int(),
    build_flavor: str('Flavour of its builds'),
    build_flavor_memory_bytes: int(),
  }),
);

export const DeploymentState = oneOf(['WIP', 'OK', 'FAIL', 'CANCELLED'], 'WIP while queued or running');
export const Deployment = named(
  'Deployment',
  obj({
    id: str('deployment_<uuid>'),
    app_id: str(),
    commit: str('The 40-character commit id'),
    state: DeploymentState,
    cause: str('What started it: a push, a rebuild, a restart, a rollback...'),
    phase: nullable(oneOf(['queued', 'receive', 'build', 'release', 'run', 'healthcheck', 'done'])),
    message: nullable(str('Why it failed or was cancelled')),
    created_at: time(),
    finished_at: nullable(time()),
  }),
);

export const Addon = named(
  'Addon',
  obj(
    {
      id: str('addon_<uuid>'),
      name: str(),
      provider: str('postgresql, redis or fs-bucket'),
      org_id: str(),
      org_name: nullable(str()),
      created_at: time(),
      linked_apps: arr(str(), 'Ids of the applications linked to it'),
      bucket: obj(
        {
          host: str('The value its apps name in CC_FS_BUCKET=<path>:<host> (also its BUCKET_HOST variable)'),
          size_bytes: int('Its size (its plan)'),
          used_bytes: nullable(int('Bytes used in its filesystem')),
          mounts: arr(obj({ app_id: str(), path: str("Inside the app's folder, e.g. /uploads") }), 'Where each linked application sees it'),
          exclusive: bool('An exclusive volume: one instance of one application mounts it at a time'),
        },
        [],
        'FS buckets only',
      ),
    },
    ['bucket'],
  ),
);

export const Services = named(
  'Services',
  obj({
    addons: arr(Addon, 'Add-ons whose variables the application receives'),
    apps: arr(obj({ id: str(), name: str() }), 'Applications whose exposed configuration it receives'),
  }),
);

export const SshKey = named(
  'SshKey',
  obj({ id: str(), label: str(), algorithm: str(), fingerprint: str('SHA256:...'), created_at: time() }),
);

export const Token = named(
  'Token',
  obj(
    {
      id: str('token_<uuid>'),
      label: str(),
      scope: oneOf(
        ['read', 'deploy', 'full'],
        'read: metadata only (no secret, no change); deploy: also deploys, restarts, rolls back, makes tokens; full: all its user may',
      ),
      user_id: str(),
      user_name: str('Only in the listing of every token (?all=1)'),
      created_at: time(),
      expires_at: nullable(time('When it stops working; null: never')),
      revoked_at: nullable(time()),
      last_used_at: nullable(time('Noted at most once a minute')),
      state: oneOf(['valid', 'expired', 'revoked']),
    },
    ['user_name'],
  ),
);

export const InstanceState = oneOf(['starting', 'running', 'restarting', 'stopping', 'stopped', 'crashed']);

export const Scale = named(
  'Scale',
  obj(
    {
      instances: int('How many instances serve the app'),
      flavor: str(),
      memory_bytes: int('Memory of each instance'),
      build_flavor: str(),
      build_memory_bytes: int('Memory of a build'),
      disk_budget_bytes: int("Disk budget of the app's repository, builds, caches and kept releases"),
      min_instances: int('The fewest instances the autoscaler keeps (equal to max_instances: a fixed count)'),
      max_instances: int('The most instances the autoscaler starts; quotas count this'),
      min_flavor: str('The smallest instance flavour of the range'),
      max_flavor: str('The largest instance flavour of the range; quotas count this'),
      autoscaling: str("The autoscaler's settings for the app, as `slipway scale --autoscaling` reads them"),
      asleep_since: nullable(time('With a minimum of 0: since when the app sleeps (no instance; its next request wakes it); null: awake')),
      sleeps: bool('False when the minimum is 0 but the app never sleeps: it has workers, which run in its instances'),
      workers: nullable(
        obj(
          {
            min: int('The fewest worker instances'),
            max: int('The most worker instances; quotas count them as instances'),
            count: int('The worker instances wanted now'),
            running: arr(obj({ id: str(), state: InstanceState }), 'The worker instances running now'),
          },
          [],
          "The app's worker instances, each running all its workers; null: no range, the workers run beside each instance",
        ),
      ),
      decisions: arr(
        obj({
          at: time(),
          direction: oneOf(['up', 'down']),
          from: int('The instance count before'),
          to: int('The instance count after (the same for a change of flavour)'),
          from_flavor: nullable(str('A change of flavour: the flavour before')),
          to_flavor: nullable(str('A change of flavour: the flavour after')),
          reason: str('What the autoscaler measured, e.g. "CPU 85% of 3 instances for 8 s"'),
          outcome: oneOf(['done', 'failed']),
          target: oneOf(['instances', 'workers'], 'Which count changed: the instances, or the worker instances'),
        }),
        "The autoscaler's latest decisions, newest first",
      ),
    },
    ['sleeps'],
  ),
);

export const Redeploy = named('Redeploy', obj({ app_id: str(), app_name: str(), deployment_id: str() }));

export const Status = named(
  'Status',
  obj({
    status: oneOf(['running', 'stopped']),
    instance: nullable(
      obj(
        { id: str(), address: str(), port: int(), state: InstanceState, restarts: int(), memory_bytes: nullable(int()) },
        [],
        'The first instance (see instances for all)',
      ),
    ),
    instances: arr(
      obj({
        id: str(),
        number: int('INSTANCE_NUMBER'),
        address: str(),
        state: InstanceState,
        restarts: int(),
        memory_bytes: nullable(int()),
        liveness: nullable(
          obj(
            { state: oneOf(['replacing', 'replaced']), reason: str('e.g. "did not answer GET / for 12 s"'), at: time() },
            [],
            'Replacing: it stopped answering and waits for its replacement; replaced: it replaced one that did',
          ),
        ),
      }),
    ),
    instance_count: int('Instances wanted (when awake)'),
    asleep_since: nullable(time('Scale to zero: since when the app sleeps (no instance; its next request wakes it); null: awake')),
    release: nullable(obj({ deployment_id: str(), commit: str() }, [], 'What serves')),
    pushed_commit: nullable(str('Head of master in the app repository')),
    deploying: arr(Deployment, 'Deployments queued or running'),
  }),
);

/** One line of a log stream; the last line is `{"end": true, ...}`. */
export const LogLine: Schema = named('LogLine', {
  anyOf: [
    obj({ time: time(), stream: str('out, err or system'), line: str() }),
    obj(
      { end: { type: 'boolean', enum: [true] }, state: DeploymentState, message: nullable(str()) },
      ['state', 'message'],
      'The closing line (a deployment log adds its final state)',
    ),
  ],
});

export const AccessLogLine: Schema = named('AccessLogLine', {
  anyOf: [
    obj(
      {
        time: time(),
        stream: str('access'),
        line: str('client method path status bytes duration instance, as one line'),
        host: str('The Host the request named'),
        client: str("The client's address as the router saw it"),
        method: str(),
        path: str('The request target, cut at 2048 characters'),
        status: int(),
        bytes: int('Response bytes sent'),
        duration_ms: { type: 'number', description: 'From the request reaching the router to the end of the answer' },
        instance: str('The instance that answered (address:port), - when none did'),
        tls: bool('Whether the request came over HTTPS'),
      },
      ['host', 'client', 'method', 'path', 'status', 'bytes', 'duration_ms', 'instance', 'tls'],
      'A request (a notice of slipway, such as dropped lines, has only time, stream and line)',
    ),
    obj({ end: { type: 'boolean', enum: [true] } }, [], 'The closing line'),
  ],
});

export const TrafficMinute = named(
  'TrafficMinute',
  obj({
    minute: time('Start of the minute'),
    requests: int(),
    errors: int('Answers with a 5xx status'),
    p95_ms: nullable({ type: 'number', description: '95th percentile duration in ms (within 25%); null without requests' }),
  }),
);

export const Setting = named('Setting', obj({ name: str(), value: bool(), description: str() }));

export const Runtime = named(
  'Runtime',
  obj({
    runtime: oneOf(['node', 'bun']),
    version: str(),
    end_of_life: bool(),
    default: bool('The version used when the app asks for none'),
  }),
);

export const Plan = named(
  'Plan',
  obj({ name: str(), description: str(), limits: str('What one add-on of the plan may use (memory, connections, statement time)') }, [
    'limits',
  ]),
);
export const AddonProvider = named('AddonProvider', obj({ name: str(), description: str(), plans: arr(Plan, 'Each provider has one') }));
