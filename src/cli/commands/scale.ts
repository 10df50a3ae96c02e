import type { ScaleView } from '../../shared/api-types.js';
import { command } from '../command.js';
import { APP_OPTIONS, resolveAppOption } from '../app-options.js';
import { printObject } from '../output.js';
import { UsageError } from '../errors.js';
import { DEFAULT_BUILD_FLAVOR, DEFAULT_INSTANCE_FLAVOR, flavorList, flavorNamed } from '../../core/flavors.js';
import { humanSize } from '../../shared/human-size.js';

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
  summary: 'Show or change the instance count and the flavours (memory, processes, CPU share) of instances and builds',
  usage:
    'scale [--flavor <name>] [--build-flavor <name>] [--instances <n>] [--disk <size>] [--app <app>] [--format json]\n' +
    '  With no option, prints the current scaling.\n' +
    `  --flavor name        memory, process limit and CPU share of each instance (default ${defaultOf(DEFAULT_INSTANCE_FLAVOR)});\n` +
    '                       applies at the next deployment or `slipway restart`\n' +
    `  --build-flavor name  the same for builds (default ${defaultOf(DEFAULT_BUILD_FLAVOR)}); applies at the next build.\n` +
    '                       A build always gets a smaller CPU share than any instance, so it cannot starve apps that serve\n' +
    '  --instances n        how many instances serve the app (1 to 40); applies at once\n' +
    '  --min-instances n  --max-instances n: accepted with the same value as --instances (no autoscaling yet)\n' +
    "  --disk size          administrators: the app's disk budget (repository, builds, caches, kept releases), e.g. 4G;\n" +
    "                       applies at once; it grows only (default: the daemon's --app-disk-budget, 2 GiB)\n" +
    `  Flavours (any case): ${flavorList()}\n` +
    '  Example: slipway scale --flavor XS --build-flavor M',
  options: {
    ...APP_OPTIONS,
    instances: { type: 'string', value: '<n>', description: 'How many instances serve the app (1 to 40); applies at once' },
    'min-instances': { type: 'string', value: '<n>', description: 'Accepted with the same value as --instances (no autoscaling yet)' },
    'max-instances': { type: 'string', value: '<n>', description: 'Accepted with the same value as --instances (no autoscaling yet)' },
    flavor: {
      type: 'string',
      value: '<name>',
      description: `Memory, process limit and CPU share of each instance (default ${defaultOf(DEFAULT_INSTANCE_FLAVOR)}); applies at the next deployment or restart`,
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
  examples: ['slipway scale', 'slipway scale --flavor XS --build-flavor M', 'slipway scale --instances 3', 'slipway scale --disk 4G'],
  printsData: true,
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    const counts = [options.instances, options['min-instances'], options['max-instances']].filter(
      (v): v is string => typeof v === 'string',
    );
    if (new Set(counts).size > 1) {
      throw new UsageError('--min-instances and --max-instances must equal --instances: slipway does not autoscale yet.');
    }
    // Names are checked by the daemon (its table is the one that counts); the CLI sends them as typed.
    const body: Record<string, unknown> = {};
    if (counts[0] !== undefined) body.instances = counts[0];
    if (options.flavor !== undefined) body.flavor = options.flavor;
    if (options['build-flavor'] !== undefined) body.buildFlavor = options['build-flavor'];
    if (options.disk !== undefined) body.disk = options.disk;
    const client = ctx.client();
    const changing = Object.keys(body).length > 0;
    const { scale: s, note } = changing
      ? await client.request<{ scale: Scale; note?: string }>('PUT', `/v1/apps/${app.id}/scale`, body)
      : await client.request<{ scale: Scale; note?: string }>('GET', `/v1/apps/${app.id}/scale`);
    printObject(
      ctx,
      {
        instances: String(s.instances),
        flavor: `${s.flavor} (${humanSize(s.memory_bytes)})`,
        'build flavor': `${s.build_flavor} (${humanSize(s.build_memory_bytes)})`,
        disk: humanSize(s.disk_budget_bytes),
      },
      s,
    );
    if (body.flavor !== undefined) ctx.err(`${INSTANCE_FLAVOR_APPLIES}\n`);
    if (body.buildFlavor !== undefined) ctx.err(`${BUILD_FLAVOR_APPLIES}\n`);
    if (note) ctx.err(`${note}\n`);
  },
});
