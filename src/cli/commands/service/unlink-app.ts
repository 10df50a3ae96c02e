import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import { resolveApp } from '../../resolve-app.js';
import type { Services } from '../../service-types.js';

export const serviceUnlinkApp = command({
  path: ['service', 'unlink-app'],
  summary: 'Unlink an application linked with link-app',
  usage: 'service unlink-app <linked-app> [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<linked-app>', description: 'The linked application: id, name or alias' }],
  examples: ['slipway service unlink-app api --app front'],
  async run(ctx, [ref], options) {
    const app = await resolveAppOption(ctx, options);
    const target = await resolveApp(ctx, ref);
    await ctx.client().request<Services>('DELETE', `/v1/apps/${app.id}/services/apps/${target.id}`);
    ctx.err(`Unlinked ${target.name} from ${app.name}.\n`);
  },
});
