import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';

export const drainRemove = command({
  path: ['drain', 'remove'],
  summary: 'Remove a log drain (lines still waiting for it are discarded)',
  usage: 'drain remove <drain-id> [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<drain-id>', description: 'One of the ids `slipway drain` lists' }],
  examples: ['slipway drain remove drain_0b6f…'],
  async run(ctx, [id], options) {
    const app = await resolveAppOption(ctx, options);
    await ctx.client().request('DELETE', `/v1/apps/${app.id}/drains/${encodeURIComponent(id)}`);
    ctx.err(`Drain ${id} removed from ${app.name}.\n`);
  },
});
