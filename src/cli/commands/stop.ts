import { command } from '../command.js';
import { APP_OPTIONS, resolveAppOption } from '../app-options.js';

export const stop = command({
  path: ['stop'],
  summary: 'Stop the application (it stays stopped until the next deploy or restart)',
  usage: 'stop [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 0, max: 0 },
  examples: ['slipway stop', 'slipway stop --app shop'],
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    const { stopped } = await ctx.client().request<{ stopped: boolean }>('POST', `/v1/apps/${app.id}/stop`);
    ctx.err(stopped ? `Stopped ${app.name}.\n` : `${app.name} was not running.\n`);
  },
});
