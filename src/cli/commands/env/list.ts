import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import { formatEnvSections, formatShellSections, OWN_SECTION } from '../../env-format.js';

export const envList = command({
  path: ['env'],
  summary: "List the application's environment variables",
  usage: 'env [--app <app>] [--format human|json|shell]',
  options: { ...APP_OPTIONS },
  args: { min: 0, max: 0 },
  examples: ['slipway env', 'slipway env > app.env', 'slipway env --format shell > env.sh', 'slipway env --alias shop --format json'],
  printsData: true,
  formats: ['human', 'json', 'shell'],
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    const data = await ctx.client().request<{
      env: Array<{ name: string; value: string }>;
      sections?: Array<{ source: string; env: Array<{ name: string; value: string }> }>;
    }>('GET', `/v1/apps/${app.id}/env?all=1`);
    const sections = data.sections ?? [{ source: OWN_SECTION, env: data.env }];
    if (ctx.format === 'json') ctx.out(JSON.stringify(sections, null, 2) + '\n');
    else ctx.out(ctx.format === 'shell' ? formatShellSections(sections) : formatEnvSections(sections));
  },
});
