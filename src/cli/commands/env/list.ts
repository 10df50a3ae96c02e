import type { Command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import { formatEnvLine, formatShellLine } from '../../env-format.js';

export const envList: Command = {
  path: ['env'],
  summary: "List the application's environment variables",
  usage: 'env [--app <app>] [--format human|json|shell]',
  options: { ...APP_OPTIONS },
  args: { min: 0, max: 0 },
  examples: ['slipway env', 'slipway env --format shell > .env.sh', 'slipway env --alias shop --format json'],
  printsData: true,
  formats: ['human', 'json', 'shell'],
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    const data = await ctx.client().request<{ env: Array<{ name: string; value: string }>; sections?: Array<{ source: string; env: Array<{ name: string; value: string }> }> }>(
      'GET',
      `/v1/apps/${app.id}/env?all=1`,
    );
    if (ctx.format === 'json') {
      ctx.out(JSON.stringify(data.sections ?? [{ source: 'application', env: data.env }], null, 2) + '\n');
      return;
    }
    const sections = data.sections ?? [{ source: 'application', env: data.env }];
    for (const section of sections) {
      if (section.env.length === 0 && section.source !== 'application') continue;
      if (ctx.format === 'human') ctx.out(`# ${section.source}\n`);
      for (const v of section.env) ctx.out((ctx.format === 'shell' ? formatShellLine(v) : formatEnvLine(v)) + '\n');
    }
  },
};
