import { command, type Command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';

function toggle(verb: 'enable' | 'disable'): Command {
  return command({
    path: ['drain', verb],
    summary:
      verb === 'enable'
        ? 'Send a disabled drain’s lines again, those that waited first'
        : 'Stop sending a drain’s lines; they wait in its buffer (the oldest dropped when it is full)',
    usage: `drain ${verb} <drain-id> [--app <app>]`,
    options: { ...APP_OPTIONS },
    args: { min: 1, max: 1 },
    arguments: [{ name: '<drain-id>', description: 'One of the ids `slipway drain` lists' }],
    examples: [`slipway drain ${verb} drain_0b6f…`],
    async run(ctx, [id], options) {
      const app = await resolveAppOption(ctx, options);
      await ctx.client().request(verb === 'enable' ? 'PUT' : 'DELETE', `/v1/apps/${app.id}/drains/${encodeURIComponent(id)}/enabled`);
      ctx.err(`Drain ${id} of ${app.name} ${verb}d.\n`);
    },
  });
}

export const drainEnable = toggle('enable');
export const drainDisable = toggle('disable');
