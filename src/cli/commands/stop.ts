import type { Command } from '../command.js';
import { resolveApp } from '../resolve-app.js';

export const stop: Command = {
  path: ['stop'],
  summary: 'Stop the application (it stays stopped until the next deploy or restart)',
  usage: 'stop [--app <app>]',
  options: { app: { type: 'string' } },
  args: { min: 0, max: 0 },
  async run(ctx, _args, options) {
    const app = await resolveApp(ctx, options.app as string | undefined);
    const { stopped } = await ctx.client().request<{ stopped: boolean }>('POST', `/v1/apps/${app.id}/stop`);
    ctx.err(stopped ? `Stopped ${app.name}.\n` : `${app.name} was not running.\n`);
  },
};
