import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import { resolveApp } from '../../resolve-app.js';
import type { Services } from '../../service-types.js';

export const serviceLinkApp = command({
  path: ['service', 'link-app'],
  summary: 'Link another application: this one receives its exposed configuration',
  usage: 'service link-app <app-to-link> [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<app-to-link>', description: 'The application whose exposed configuration this one receives: id, name or alias' }],
  examples: ['slipway service link-app api --app front'],
  async run(ctx, [ref], options) {
    const app = await resolveAppOption(ctx, options);
    const target = await resolveApp(ctx, ref);
    await ctx.client().request<Services>('POST', `/v1/apps/${app.id}/services/apps`, { app: target.id });
    ctx.err(
      `Linked ${target.name} to ${app.name}: ${app.name} receives what ${target.name} exposes (\`slipway published-config --app ${target.name}\`) from its next deploy or \`slipway restart\`.\n`,
    );
  },
});
