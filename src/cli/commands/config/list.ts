import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';

interface Setting {
  name: string;
  value: boolean;
  description: string;
}

export const configList = command({
  path: ['config'],
  summary: "List the application's platform settings (e.g. cancel-on-push)",
  usage: 'config [--app <app>] [--format human|json]',
  options: { ...APP_OPTIONS },
  args: { min: 0, max: 0 },
  examples: ['slipway config', 'slipway config --format json'],
  printsData: true,
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    const { config } = await ctx.client().request<{ config: Setting[] }>('GET', `/v1/apps/${app.id}/config`);
    if (ctx.format === 'json') {
      ctx.out(JSON.stringify(config, null, 2) + '\n');
      return;
    }
    for (const s of config) ctx.out(`${s.name}: ${s.value}    # ${s.description}\n`);
  },
});

export const configGet = command({
  path: ['config', 'get'],
  summary: 'Print one platform setting of the application',
  usage: 'config get <name> [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<name>', description: 'The setting, e.g. cancel-on-push' }],
  examples: ['slipway config get cancel-on-push'],
  printsData: true,
  async run(ctx, [name], options) {
    const app = await resolveAppOption(ctx, options);
    const { config } = await ctx.client().request<{ config: Setting[] }>('GET', `/v1/apps/${app.id}/config`);
    const found = config.find((s) => s.name === name);
    if (!found) {
      ctx.err(`Unknown setting ${JSON.stringify(name)}. Settings: ${config.map((s) => s.name).join(', ')}.\n`);
      return 1;
    }
    ctx.out(`${found.value}\n`);
  },
});

export const configSet = command({
  path: ['config', 'set'],
  summary: 'Change a platform setting of the application: cancel-on-push or force-https, true|false',
  usage: 'config set <name> <true|false> [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 2, max: 2 },
  arguments: [
    { name: '<name>', description: 'The setting, e.g. cancel-on-push' },
    { name: '<true|false>', description: 'Its new value' },
  ],
  examples: ['slipway config set cancel-on-push true', 'slipway config set force-https true'],
  async run(ctx, [name, value], options) {
    const app = await resolveAppOption(ctx, options);
    const result = await ctx
      .client()
      .request<{ name: string; value: boolean }>('PUT', `/v1/apps/${app.id}/config/${encodeURIComponent(name)}`, { value });
    ctx.err(`${result.name} is now ${result.value} for ${app.name}.\n`);
  },
});
