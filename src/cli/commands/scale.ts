import type { Command } from '../command.js';
import { resolveApp } from '../resolve-app.js';
import { printObject } from '../output.js';
import { UsageError } from '../errors.js';

interface Scale {
  instances: number;
  flavor: string;
  memory_bytes: number;
  build_flavor: string;
  build_memory_bytes: number;
}

function mib(bytes: number): string {
  return bytes >= 1024 ** 3 ? `${bytes / 1024 ** 3} GiB` : `${bytes / 1024 ** 2} MiB`;
}

export const scale: Command = {
  path: ['scale'],
  summary: 'Show or change the instance count and the flavours (pico, nano, XS, S, M) of instances and builds',
  usage:
    'scale [--instances <n>] [--min-instances <n>] [--max-instances <n>] [--flavor <name>] [--build-flavor <name>] [--app <app>]\n' +
    '  --instances n      how many instances serve the app (1 to 40); applies at once\n' +
    '  --min-instances n  --max-instances n: accepted with the same value as --instances (no autoscaling yet)\n' +
    '  --flavor name      memory, processes and CPU of each instance (default nano, 512 MiB); applies at the next deploy or restart\n' +
    '  --build-flavor name  the same for builds (default S, 2 GiB)\n' +
    '  Example: slipway scale --instances 3 --flavor XS',
  options: {
    app: { type: 'string' },
    instances: { type: 'string' },
    'min-instances': { type: 'string' },
    'max-instances': { type: 'string' },
    flavor: { type: 'string' },
    'build-flavor': { type: 'string' },
  },
  args: { min: 0, max: 0 },
  printsData: true,
  async run(ctx, _args, options) {
    const app = await resolveApp(ctx, options.app as string | undefined);
    const counts = [options.instances, options['min-instances'], options['max-instances']].filter((v): v is string => typeof v === 'string');
    if (new Set(counts).size > 1) {
      throw new UsageError('--min-instances and --max-instances must equal --instances: slipway does not autoscale yet.');
    }
    const body: Record<string, unknown> = {};
    if (counts[0] !== undefined) body.instances = counts[0];
    if (options.flavor !== undefined) body.flavor = options.flavor;
    if (options['build-flavor'] !== undefined) body.buildFlavor = options['build-flavor'];
    const client = ctx.client();
    const changing = Object.keys(body).length > 0;
    const { scale: s } = changing
      ? await client.request<{ scale: Scale }>('PUT', `/v1/apps/${app.id}/scale`, body)
      : await client.request<{ scale: Scale }>('GET', `/v1/apps/${app.id}/scale`);
    printObject(ctx, { instances: String(s.instances), flavor: `${s.flavor} (${mib(s.memory_bytes)})`, 'build flavor': `${s.build_flavor} (${mib(s.build_memory_bytes)})` }, s);
    if (body.flavor !== undefined || body.buildFlavor !== undefined) ctx.err('Flavours apply at the next deployment or `slipway restart`.\n');
  },
};
