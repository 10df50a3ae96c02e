import type { ScaleView } from '../../shared/api-types.js';
import { command } from '../command.js';
import { APP_OPTIONS, resolveAppOption } from '../app-options.js';
import { printObject } from '../output.js';
import { DEFAULT_BUILD_FLAVOR, DEFAULT_INSTANCE_FLAVOR, flavorList, flavorNamed } from '../../core/flavors.js';
import { humanSize } from '../../shared/human-size.js';
import { decisionLines, scaleFields, scaleRequestBody } from '../scale-format.js';

/** The answer of GET and PUT /v1/apps/:app/scale. */
type Scale = ScaleView;

/** "nano, 512 MiB". */
function defaultOf(name: string): string {
  const f = flavorNamed(name);
  return `${f.name}, ${humanSize(f.memoryBytes)}`;
}

const INSTANCE_FLAVOR_APPLIES =
  'The instance flavour applies at the next deployment or `slipway restart`; running instances keep their limits until then.';
const BUILD_FLAVOR_APPLIES =
  'The build flavour applies at the next build (the next push, or `slipway restart --commit <sha>` when it rebuilds).';

export const scale = command({
  path: ['scale'],
  summary:
    'Show or change the instance count and the flavours (memory, processes, CPU share) of instances and builds, and their autoscaling ranges',
  usage:
    'scale [--instances <n> | --min-instances <n> --max-instances <m>] [--flavor <name> | --min-flavor <name> --max-flavor <name>]\n' +
    '      [--workers <n> | --min-workers <n> --max-workers <m> | --workers default]\n' +
    '      [--autoscaling <settings>] [--build-flavor <name>] [--disk <size>] [--app <app>] [--format json]\n' +
    "  With no option, prints the current scaling: ranges, the count and flavour now, the workers' range and count, the\n" +
    "  autoscaler's settings, its last decisions.\n" +
    '  --instances n        a fixed number of instances (1 to 40); applies at once\n' +
    '  --min-instances n  --max-instances m\n' +
    '                       a range: the autoscaler starts instances when they are saturated (CPU, requests queued) and\n' +
    '                       stops them when the load stays low; quotas count the maximum. A bound given alone keeps the other.\n' +
    '                       --min-instances 0: the app sleeps (its instances stop) after idle-after without a request; the\n' +
    '                       router holds its next request until an instance passes its health check, then answers it.\n' +
    '                       An app with workers never sleeps (they run in its instances) unless they have a range of their\n' +
    '                       own (--min-workers): then only its web instances sleep. Its cron jobs run as usual\n' +
    '  --min-workers n  --max-workers m\n' +
    '                       the workers (CC_WORKER_COMMAND…) get worker instances of their own: each runs all of them, is\n' +
    '                       never routed nor health-checked, and the web instances run none. The autoscaler keeps their\n' +
    '                       count in the range from their own CPU. Quotas count the maximum as instances. Moving the workers\n' +
    '                       (a range set or dropped) applies at the next deployment or `slipway restart`\n' +
    '  --workers n          a fixed count of worker instances (1 to 40; applies at once);\n' +
    '                       --workers default: no range, the workers run beside each instance again (the default)\n' +
    `  --flavor name        memory, process limit and CPU share of each instance (default ${defaultOf(DEFAULT_INSTANCE_FLAVOR)});\n` +
    '                       applies at the next deployment or `slipway restart`\n' +
    '  --min-flavor name  --max-flavor name\n' +
    "                       a range of instance flavours: the autoscaler takes the next one up when an instance's memory\n" +
    '                       nears its limit (or its CPU is saturated at the maximum count), and back down when both stay\n' +
    '                       low at the minimum count, through a hitless restart; quotas count the largest\n' +
    '  --autoscaling s      the autoscaler\'s settings for this app, key=value separated by commas (or "default"):\n' +
    '                       cpu-out=80 (% of one core per instance: scale out at or over it), cpu-in=30 (scale in when the\n' +
    '                       load on one instance fewer stays under it), inflight-out=0 (requests in flight per instance\n' +
    '                       that scale out; 0: off), mem-out=90 (% of the memory limit: a larger flavour), mem-in=50 (a\n' +
    '                       smaller flavour when the memory would stay under it there), out-after=6s, in-after=60s (how\n' +
    '                       long the load must last), cooldown=10s, idle-after=15m (with --min-instances 0: how long\n' +
    '                       without a request before the app sleeps; 1s to 60m)\n' +
    `  --build-flavor name  the same for builds (default ${defaultOf(DEFAULT_BUILD_FLAVOR)}); applies at the next build.\n` +
    '                       A build always gets a smaller CPU share than any instance, so it cannot starve apps that serve\n' +
    "  --disk size          administrators: the app's disk budget (repository, builds, caches, kept releases), e.g. 4G;\n" +
    "                       applies at once; it grows only (default: the daemon's --app-disk-budget, 2 GiB)\n" +
    `  Flavours (any case): ${flavorList()}\n` +
    '  Example: slipway scale --min-instances 1 --max-instances 4',
  options: {
    ...APP_OPTIONS,
    instances: { type: 'string', value: '<n>', description: 'A fixed number of instances (1 to 40); applies at once' },
    workers: {
      type: 'string',
      value: '<n>',
      description: 'A fixed count of worker instances (1 to 40), each running all the workers; "default": beside each instance',
    },
    'min-workers': { type: 'string', value: '<n>', description: 'The fewest worker instances the autoscaler keeps (1 to 40)' },
    'max-workers': {
      type: 'string',
      value: '<n>',
      description: 'The most worker instances the autoscaler starts (1 to 40); quotas count them as instances',
    },
    'min-instances': {
      type: 'string',
      value: '<n>',
      description: 'The fewest instances the autoscaler keeps (0 to 40; 0: sleeps when idle)',
    },
    'max-instances': { type: 'string', value: '<n>', description: 'The most instances the autoscaler starts (1 to 40); quotas count it' },
    flavor: {
      type: 'string',
      value: '<name>',
      description: `Memory, process limit and CPU share of each instance (default ${defaultOf(DEFAULT_INSTANCE_FLAVOR)}); applies at the next deployment or restart`,
    },
    'min-flavor': { type: 'string', value: '<name>', description: 'The smallest instance flavour of the range' },
    'max-flavor': { type: 'string', value: '<name>', description: 'The largest instance flavour of the range; quotas count it' },
    autoscaling: {
      type: 'string',
      value: '<settings>',
      description:
        "The autoscaler's settings for this app: cpu-out, cpu-in, inflight-out, out-after, in-after, cooldown (key=value,…) or default",
    },
    disk: {
      type: 'string',
      value: '<size>',
      description:
        "Administrators: the app's disk budget (repository, builds, caches, kept releases), e.g. 4G; grows only, applies at once",
    },
    'build-flavor': {
      type: 'string',
      value: '<name>',
      description: `The same for builds (default ${defaultOf(DEFAULT_BUILD_FLAVOR)}); applies at the next build`,
    },
  },
  args: { min: 0, max: 0 },
  examples: [
    'slipway scale',
    'slipway scale --min-instances 1 --max-instances 4',
    'slipway scale --autoscaling cpu-out=70,in-after=2m',
    'slipway scale --min-workers 1 --max-workers 3',
    'slipway scale --workers default',
    'slipway scale --flavor XS --build-flavor M',
    'slipway scale --instances 3',
    'slipway scale --disk 4G',
  ],
  printsData: true,
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    // Names, counts and settings are checked by the daemon (its tables are the ones that count).
    const body = scaleRequestBody(options);
    const client = ctx.client();
    const changing = Object.keys(body).length > 0;
    const { scale: s, note } = changing
      ? await client.request<{ scale: Scale; note?: string }>('PUT', `/v1/apps/${app.id}/scale`, body)
      : await client.request<{ scale: Scale; note?: string }>('GET', `/v1/apps/${app.id}/scale`);
    printObject(ctx, scaleFields(s), s);
    if (ctx.format !== 'json') {
      const decisions = decisionLines(s);
      ctx.out(
        `last decisions${decisions.length === 0 ? `  ${s.min_instances === s.max_instances ? '(a fixed count)' : '(none yet)'}` : ':'}\n`,
      );
      for (const line of decisions) ctx.out(`  ${line}\n`);
    }
    if (body.flavor !== undefined || body.minFlavor !== undefined || body.maxFlavor !== undefined) ctx.err(`${INSTANCE_FLAVOR_APPLIES}\n`);
    if (body.buildFlavor !== undefined) ctx.err(`${BUILD_FLAVOR_APPLIES}\n`);
    if (note) ctx.err(`${note}\n`);
  },
});
