import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import { formatEnvLine, formatShellLine } from '../../env-format.js';

export const publishedConfigList = command({
  path: ['published-config'],
  summary: 'List the configuration the application exposes to the applications linked to it',
  usage: 'published-config [--app <app>] [--format human|json|shell]',
  options: { ...APP_OPTIONS },
  args: { min: 0, max: 0 },
  examples: ['slipway published-config', 'slipway published-config --format shell'],
  printsData: true,
  formats: ['human', 'json', 'shell'],
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    const data = await ctx
      .client()
      .request<{ published_config: Array<{ name: string; value: string }> }>('GET', `/v1/apps/${app.id}/published-config`);
    if (ctx.format === 'json') {
      ctx.out(JSON.stringify(data.published_config, null, 2) + '\n');
      return;
    }
    for (const v of data.published_config) ctx.out((ctx.format === 'shell' ? formatShellLine(v) : formatEnvLine(v)) + '\n');
  },
});
