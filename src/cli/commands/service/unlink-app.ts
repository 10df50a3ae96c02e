import type { Command } from '../../command.js';
import { resolveApp } from '../../resolve-app.js';
import type { Services } from '../../service-types.js';

export const serviceUnlinkApp: Command = {
  path: ['service', 'unlink-app'],
  summary: 'Unlink an application linked with link-app',
  usage: 'service unlink-app <linked-app> [--app <app>]',
  options: { app: { type: 'string' } },
  args: { min: 1, max: 1 },
  async run(ctx, [ref], options) {
    const app = await resolveApp(ctx, options.app as string | undefined);
    const target = await resolveApp(ctx, ref);
    await ctx.client().request<Services>('DELETE', `/v1/apps/${app.id}/services/apps/${target.id}`);
    ctx.err(`Unlinked ${target.name} from ${app.name}.\n`);
  },
};
